/**
 * `hearth mailbox`: the auth mail a project without an SMTP server kept,
 * read from the CLI (a newcomer signing in by code or link locally).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { until } from '../helpers/poll.ts';
import { remoteEnv, runHearth } from './run.ts';

let th: TestHearth;
before(async () => {
  th = await startTestHearth();
  const allow = await th.api('PATCH', `/v1/projects/${th.info.PROJECT_REF}/config/auth`, {
    body: { uri_allow_list: 'http://localhost:3000/**' },
  });
  assert.equal(allow.status, 200);
});
after(async () => {
  await th?.close();
});

const otp = (email: string) =>
  fetch(`${th.info.BASE_URL}/auth/v1/otp`, {
    method: 'POST',
    headers: { apikey: th.info.PUBLISHABLE_KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ email }),
  });

test('lists the newest mail with its code and link; --to picks one address; -o json for scripts; a bad --limit is refused', async () => {
  const env = remoteEnv(th);
  for (const email of ['ada@example.com', 'bob@example.com']) assert.equal((await otp(email)).status, 200);
  // /otp mails after its answer.
  const mails = await until(
    async () => {
      const listed = await runHearth(['mailbox', '-o', 'json'], { env });
      assert.equal(listed.status, 0, listed.stderr);
      return JSON.parse(listed.stdout) as { to: string; subject: string; body: string }[];
    },
    (listed) => listed.length === 2,
    10_000,
  );
  assert.deepEqual(
    mails.map((m) => m.to),
    ['bob@example.com', 'ada@example.com'],
  );

  const ada = await runHearth(['mailbox', '--to', 'ADA@example.com', '-o', 'json'], { env });
  const [mail] = JSON.parse(ada.stdout) as { to: string; body: string }[];
  assert.equal(mail!.to, 'ada@example.com');
  const code = mail!.body.match(/\b\d{6}\b/)![0];
  const link = mail!.body.match(/https?:\/\/\S+/)![0];

  const table = await runHearth(['mailbox', '--to', 'ada@example.com'], { env });
  assert.equal(table.status, 0, table.stderr);
  assert.match(table.stdout, /^CREATED_AT\s+TO\s+SUBJECT\s+CODE\s+LINK\n/);
  assert.ok(table.stdout.includes(code) && table.stdout.includes(link), table.stdout);
  assert.ok(!table.stdout.includes('bob@example.com'));
  // The code it shows signs in.
  const verified = await fetch(`${th.info.BASE_URL}/auth/v1/verify`, {
    method: 'POST',
    headers: { apikey: th.info.PUBLISHABLE_KEY, 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'email', email: 'ada@example.com', token: code }),
  });
  assert.equal(verified.status, 200);

  const bad = await runHearth(['mailbox', '--limit', '0'], { env });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /--limit must be an integer from 1 to 1000/);
});
