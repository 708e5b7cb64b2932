/**
 * Every place that stores an outbound target refuses, when it is saved, what
 * the delivery guard would refuse anyway (src/outbound/address.ts
 * targetRefusal): one table of loopback, private and metadata targets in
 * every notation, against every saving route, each answering its area's code.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { enableWorkflows } from '../workflows/helpers.ts';

let h: TestHearth;
let ref: string;
before(async () => {
  h = await startTestHearth();
  ref = h.info.PROJECT_REF;
  await enableWorkflows(h);
});
after(async () => {
  await h?.close();
});

const REFUSED = [
  'https://localhost/x',
  'https://localhost./x',
  'https://LOCALHOST:8443/x',
  'https://app.localhost/x',
  'https://ip6-localhost/x',
  'https://ip6-loopback./x',
  'https://127.0.0.1/x',
  'https://127.1/x',
  'https://2130706433/x',
  'https://0177.0.0.1/x',
  'https://0x7f.0.0.1/x',
  'https://0x7f000001/x',
  'https://[::1]/x',
  'https://[::ffff:127.0.0.1]/x',
  'https://[::ffff:a9fe:a9fe]/x',
  'https://0.0.0.0/x',
  'https://0/x',
  'https://169.254.169.254/latest/meta-data/',
  'https://metadata.google.internal/computeMetadata/v1/',
  'https://metadata.google.internal./computeMetadata/v1/',
  'https://[fd00:ec2::254]/x',
  'https://100.100.100.200/x',
  'https://10.0.0.1/x',
  'https://172.16.0.1/x',
  'https://192.168.1.1/x',
  'https://[fe80::1]/x',
];
const PUBLIC = 'https://hooks.example.com/in';

/** Each route that saves an outbound target: how to save one, and the code it refuses with. */
const ROUTES: { name: string; code: string; save(url: string): Promise<{ status: number; body: any }> }[] = [
  {
    name: 'workflow webhook step (PUT workflows/{name})',
    code: 'invalid_definition',
    save: (url) =>
      h.api('PUT', `/v1/projects/${ref}/workflows/hooked`, {
        body: { steps: [{ key: 'w', kind: 'webhook', target: url }] },
      }),
  },
  {
    name: 'workflow compensating webhook',
    code: 'invalid_definition',
    save: (url) =>
      h.api('PUT', `/v1/projects/${ref}/workflows/undo`, {
        body: { steps: [{ key: 'q', kind: 'enqueue', target: 'jobs', compensate: { kind: 'webhook', target: url } }] },
      }),
  },
  {
    name: 'workflow fan-out child webhook',
    code: 'invalid_definition',
    save: (url) =>
      h.api('PUT', `/v1/projects/${ref}/workflows/fan`, {
        body: {
          steps: [
            { key: 'f', kind: 'fanout', children: [{ key: 'c', kind: 'webhook', target: url }] },
            { key: 'j', kind: 'join' },
          ],
        },
      }),
  },
  {
    name: 'cron webhook job (POST cron-jobs)',
    code: 'invalid_target',
    save: (url) =>
      h.api('POST', `/v1/projects/${ref}/cron-jobs`, {
        body: {
          name: `hook-${Math.random().toString(36).slice(2, 10)}`,
          schedule: '* * * * *',
          target_kind: 'webhook',
          target: url,
        },
      }),
  },
  {
    name: 'log drain (PUT log-drain)',
    code: 'invalid_request',
    save: (url) => h.api('PUT', `/v1/projects/${ref}/log-drain`, { body: { url } }),
  },
  {
    name: 'social sign-in issuer (config/auth external_oidc_url)',
    code: 'invalid_field',
    save: (url) => h.api('PATCH', `/v1/projects/${ref}/config/auth`, { body: { external_oidc_url: url } }),
  },
  {
    name: "SMTP host (config/auth smtp_host), the URL's host as written",
    code: 'invalid_field',
    save: (url) =>
      h.api('PATCH', `/v1/projects/${ref}/config/auth`, {
        body: { smtp_host: url.split('/')[2]!.replace(/:\d+$/, '') },
      }),
  },
];

describe('outbound targets are checked when saved', () => {
  for (const route of ROUTES) {
    test(`${route.name}: ${REFUSED.length} loopback, private and metadata targets refused with 400 ${route.code}; a public one saved`, async () => {
      const accepted: string[] = [];
      for (const url of REFUSED) {
        const res = await route.save(url);
        if (res.status !== 400) {
          accepted.push(`${url} -> ${res.status}`);
          continue;
        }
        assert.equal(res.body.error.code, route.code, url);
        assert.match(res.body.error.message, /loopback|metadata|private|link-local|unspecified|address/, url);
      }
      assert.deepEqual(accepted, []);
      const ok = await route.save(PUBLIC);
      assert.ok(ok.status === 200 || ok.status === 201, `${PUBLIC}: ${ok.status} ${JSON.stringify(ok.body)}`);
    });
  }

  test('nothing refused was stored: no cron job, no drain, no workflow version, settings unchanged', async () => {
    const jobs = await h.api('GET', `/v1/projects/${ref}/cron-jobs`);
    assert.deepEqual(
      jobs.body.map((j: { target: string }) => j.target),
      [PUBLIC],
    );
    assert.equal((await h.api('GET', `/v1/projects/${ref}/log-drain`)).body.url, PUBLIC);
    assert.equal((await h.api('GET', `/v1/projects/${ref}/workflows/hooked`)).body.version, 1);
    const auth = (await h.api('GET', `/v1/projects/${ref}/config/auth`)).body;
    assert.equal(auth.external_oidc_url, PUBLIC);
    assert.equal(auth.smtp_host, 'hooks.example.com');
  });
});
