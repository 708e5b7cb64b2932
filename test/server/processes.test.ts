import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { until } from '../helpers/poll.ts';

// Two Hearth processes (role api and role all) on one control database serve the same projects,
// started as docs/configuration.md has a deployment do it: one HEARTH_MASTER_KEY, given to both,
// and a data folder that does not exist yet (nothing but the first start makes it then).
let first: TestHearth;
let second: TestHearth;
const parent = mkdtempSync(path.join(tmpdir(), 'hearth-processes-'));
before(async () => {
  const shared = { HEARTH_MASTER_KEY: randomBytes(32).toString('base64') };
  first = await startTestHearth({ dataDir: path.join(parent, 'not-yet', 'data'), env: shared });
  second = await startTestHearth({
    controlDb: first.config.controlDb,
    dataDir: first.config.dataDir,
    env: { ...shared, HEARTH_ROLE: 'api' },
  });
});
after(async () => {
  await second?.close();
  await first?.close();
  rmSync(parent, { recursive: true, force: true });
});

test('both processes serve the same default project and keys', async () => {
  assert.notEqual(first.url, second.url);
  assert.equal(second.info.PROJECT_REF, first.info.PROJECT_REF);
  assert.equal(second.info.SECRET_KEY, first.info.SECRET_KEY);
  for (const h of [first, second]) {
    const res = await fetch(`${h.url}/auth/v1/.well-known/jwks.json`, {
      headers: { apikey: first.info.PUBLISHABLE_KEY },
    });
    assert.equal(res.status, 200);
  }
});

test('a project created through one process is served and deletable through the other', async () => {
  const orgs = await first.api('GET', '/v1/organizations');
  const created = await first.api('POST', '/v1/projects', {
    body: { name: 'Shared', organization_id: orgs.body[0].id },
  });
  const ref = created.body.ref;
  const viaSecond = await second.api('GET', `/v1/projects/${ref}/api-keys`);
  assert.equal(viaSecond.status, 200);
  const key = viaSecond.body[0].api_key;
  const jwks = await fetch(`${second.url}/project/${ref}/auth/v1/.well-known/jwks.json`, { headers: { apikey: key } });
  assert.equal(jwks.status, 200);

  // Warm both caches, delete through the second process, and the first stops serving it too.
  assert.equal(
    (await fetch(`${first.url}/project/${ref}/auth/v1/.well-known/jwks.json`, { headers: { apikey: key } })).status,
    200,
  );
  assert.equal((await second.api('DELETE', `/v1/projects/${ref}`, { body: { confirm: ref } })).status, 200);
  const status = await until(
    async () =>
      (await fetch(`${first.url}/project/${ref}/auth/v1/.well-known/jwks.json`, { headers: { apikey: key } })).status,
    (s) => s === 404,
  );
  assert.equal(status, 404);
});

test('a config change through one process is seen by the other', async () => {
  const ref = first.info.PROJECT_REF;
  // Warm the second process's settings cache, then change through the first.
  const project = (await second.hearth.registry.byReference(ref))!;
  assert.equal((await project.settings('workflows')).enabled, false);
  await first.api('PATCH', `/v1/projects/${ref}/config/workflows`, { body: { enabled: true } });
  const settings = await until(
    () => project.settings('workflows'),
    (s) => s.enabled === true,
  );
  assert.equal(settings.enabled, true);
});

test('a process given another master key refuses to start, saying so, before it listens', async () => {
  await assert.rejects(
    startTestHearth({
      controlDb: first.config.controlDb,
      dataDir: first.config.dataDir,
      env: { HEARTH_MASTER_KEY: randomBytes(32).toString('base64'), HEARTH_ROLE: 'api' },
    }),
    (err: Error & { code?: string }) =>
      err.code === 'invalid_config' && /not the key this deployment's database was sealed with/.test(err.message),
  );
});

test('HEARTH_OWNER_EMAIL and HEARTH_OWNER_PASSWORD the members API would refuse stop the start with invalid_config', async () => {
  for (const [env, named] of [
    [{ HEARTH_OWNER_EMAIL: 'bad', HEARTH_OWNER_PASSWORD: 'a-long-enough-password' }, /HEARTH_OWNER_EMAIL/],
    [{ HEARTH_OWNER_EMAIL: 'owner@example.com', HEARTH_OWNER_PASSWORD: 'short' }, /HEARTH_OWNER_PASSWORD/],
  ] as const) {
    await assert.rejects(
      startTestHearth({ controlDb: first.config.controlDb, dataDir: first.config.dataDir, env: { ...env } }),
      (err: Error & { code?: string }) => err.code === 'invalid_config' && named.test(err.message),
    );
  }
});
