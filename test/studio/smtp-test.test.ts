/**
 * POST /v1/projects/{ref}/config/auth/smtp-test, the Studio's "send test
 * mail" button: the mail reaches a real SMTP server; no SMTP set, a bad
 * body, a developer and an unreachable server each get their own answer.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { startInbox, type Inbox } from '../auth/helpers.ts';

let h: TestHearth;
let inbox: Inbox;
let path = '';

before(async () => {
  inbox = await startInbox();
  h = await startTestHearth({ env: { HEARTH_OUTBOUND_ALLOW: '127.0.0.1/32' } });
  path = `/v1/projects/${h.info.PROJECT_REF}/config/auth/smtp-test`;
});
after(async () => {
  await h?.close();
  await inbox?.close();
});

test('without smtp_host it says to configure SMTP first', async () => {
  const r = await h.api('POST', path, { body: { to: 'me@example.test' } });
  assert.equal(r.status, 400);
  assert.equal(r.body.code, 'smtp_not_configured');
});

test('sends through the saved SMTP server', async () => {
  await h.api('PATCH', `/v1/projects/${h.info.PROJECT_REF}/config/auth`, {
    body: { smtp_host: '127.0.0.1', smtp_port: inbox.port, smtp_admin_email: 'auth@hearth.test' },
  });
  const r = await h.api('POST', path, { body: { to: 'Me@Example.test' } });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, { sent: true, to: 'me@example.test' });
  const mail = await inbox.next('me@example.test');
  assert.equal(mail.subject, 'Hearth test mail');
  assert.match(mail.text, new RegExp(h.info.PROJECT_REF));
});

test('a bad body is 400, a developer 403, a server that refuses 502', async () => {
  assert.equal((await h.api('POST', path, { body: {} })).body.code, 'invalid_request');
  assert.equal((await h.api('POST', path, { body: { to: 'not an address' } })).status, 400);

  const [org] = (await h.api('GET', '/v1/organizations')).body;
  await h.api('POST', `/v1/organizations/${org.id}/members`, {
    body: { email: 'dev@example.test', password: 'Developer-pw-123', role: 'developer' },
  });
  const token = (
    await h.api('POST', '/v1/login', { token: null, body: { email: 'dev@example.test', password: 'Developer-pw-123' } })
  ).body.access_token;
  assert.equal((await h.api('POST', path, { token, body: { to: 'me@example.test' } })).status, 403);

  await h.api('PATCH', `/v1/projects/${h.info.PROJECT_REF}/config/auth`, { body: { smtp_port: 1 } });
  const r = await h.api('POST', path, { body: { to: 'me@example.test' } });
  assert.equal(r.status, 502);
  assert.equal(r.body.code, 'smtp_failed');
});
