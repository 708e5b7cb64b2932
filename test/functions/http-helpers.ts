// Helpers for the functions tests that go through a real Hearth: deploy and
// secrets through the management API, a second project with its key.
import type { TestHearth } from '../helpers/hearth.ts';

export interface ProjectHandle {
  ref: string;
  base: string;
  publishable: string;
  secret: string;
}

export function defaultProject(h: TestHearth): ProjectHandle {
  return { ref: h.info.PROJECT_REF, base: h.url, publishable: h.info.PUBLISHABLE_KEY, secret: h.info.SECRET_KEY };
}

export async function createProject(h: TestHearth, name: string): Promise<ProjectHandle> {
  const orgs = await h.api('GET', '/v1/organizations');
  const created = await h.api('POST', '/v1/projects', { body: { name, organization_id: orgs.body[0].id } });
  if (created.status !== 201) throw new Error(`project creation failed: ${JSON.stringify(created.body)}`);
  const keys = await h.api('GET', `/v1/projects/${created.body.ref}/api-keys`);
  const key = (type: string) => keys.body.find((k: { type: string }) => k.type === type).api_key as string;
  return { ref: created.body.ref, base: created.body.base_url, publishable: key('publishable'), secret: key('secret') };
}

/** Deploys through the management API; throws unless it answers 201. */
export async function deploy(h: TestHearth, ref: string, name: string, body: Record<string, unknown>) {
  const res = await h.api('PUT', `/v1/projects/${ref}/functions/${name}`, { body });
  if (res.status !== 201) throw new Error(`deploy of ${name} failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { name: string; version: number; verify_jwt: boolean; updated_at: string };
}

export async function putSecrets(h: TestHearth, ref: string, secrets: Record<string, string>) {
  const res = await h.api('PUT', `/v1/projects/${ref}/secrets`, {
    body: Object.entries(secrets).map(([name, value]) => ({ name, value })),
  });
  if (res.status !== 200) throw new Error(`secrets failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { name: string; value: string }[];
}

export { until } from '../helpers/poll.ts';
