/**
 * Which Hearth and which project: `hearth login` (token or e-mail and
 * password), the saved login's file rights, `link`, `projects`, `keys`, the
 * local Hearth without a login, and the one-line errors of a bad target.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';
import { bin, localEnv, remoteEnv, runHearth } from './run.ts';

let th: TestHearth;
before(async () => {
  th = await startTestHearth({
    env: { HEARTH_OWNER_EMAIL: 'owner@example.com', HEARTH_OWNER_PASSWORD: 'correct horse battery 9' },
  });
});
after(() => th.close());

/** A user who logged in: the saved login alone, no HEARTH_* variables. */
async function loggedIn(): Promise<NodeJS.ProcessEnv> {
  const env = remoteEnv(th);
  const r = await runHearth(['login', '--url', th.url], { env });
  assert.equal(r.status, 0, r.stderr);
  delete env.HEARTH_ACCESS_TOKEN;
  delete env.HEARTH_API_URL;
  return env;
}

test('login with HEARTH_ACCESS_TOKEN saves it 0600 in the config folder; later commands use it', async () => {
  const env = remoteEnv(th);
  const r = await runHearth(['login', '--url', `${th.url}/`], { env });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /Logged in to http:\/\/.* with HEARTH_ACCESS_TOKEN \(1 project\)/);
  const file = path.join(env.XDG_CONFIG_HOME!, 'hearth', 'credentials.json');
  assert.equal(statSync(file).mode & 0o777, 0o600);
  assert.equal(statSync(path.dirname(file)).mode & 0o777, 0o700);
  const saved = JSON.parse(readFileSync(file, 'utf8'));
  assert.equal(saved.api_url, th.url);
  assert.equal(saved.access_token, th.info.MANAGEMENT_TOKEN);

  delete env.HEARTH_ACCESS_TOKEN;
  delete env.HEARTH_API_URL;
  const list = await runHearth(['projects', 'list', '-o', 'json'], { env });
  assert.equal(list.status, 0, list.stderr);
  assert.deepEqual(
    JSON.parse(list.stdout).map((p: { ref: string }) => p.ref),
    [th.info.PROJECT_REF],
  );

  const out = await runHearth(['logout'], { env });
  assert.equal(out.stdout.trim(), 'Logged out.');
  // Logged out, with no local Hearth: the unreachable data folder is what it tries.
  const after = await runHearth(['projects', 'list'], { env });
  assert.equal(after.status, 1);
});

test('login with e-mail and password (from stdin in a script); a wrong password is one line, nothing saved', async () => {
  const env = remoteEnv(th);
  delete env.HEARTH_ACCESS_TOKEN;
  const bad = await runHearth(['login', '--url', th.url, '--email', 'owner@example.com'], {
    env,
    input: 'wrong password\n',
  });
  assert.equal(bad.status, 1);
  assert.equal(bad.stderr, `hearth: Wrong e-mail or password for ${th.url}.\n`);
  const none = await runHearth(['login', '--url', th.url], { env });
  assert.equal(none.status, 1);
  assert.match(none.stderr, /Pass --email/);
  // A data-plane URL pasted for the server's: the refusal says to drop the path.
  const pathed = await runHearth(['login', '--url', `${th.url}/auth/v1/health`, '--email', 'owner@example.com'], {
    env,
    input: 'correct horse battery 9\n',
  });
  assert.equal(pathed.status, 1);
  assert.match(
    pathed.stderr,
    /Give the server's own URL, without \/auth\/v1\/health: the management API is at its root\.\n$/,
  );

  const ok = await runHearth(['login', '--url', th.url, '--email', 'owner@example.com'], {
    env,
    input: 'correct horse battery 9\n',
  });
  assert.equal(ok.status, 0, ok.stderr);
  assert.match(ok.stdout, /as owner@example.com/);
  const saved = JSON.parse(readFileSync(path.join(env.XDG_CONFIG_HOME!, 'hearth', 'credentials.json'), 'utf8'));
  assert.equal(saved.email, 'owner@example.com');
  assert.ok(Date.parse(saved.expires_at) > Date.now());
  delete env.HEARTH_API_URL;
  const keys = await runHearth(['keys', '-o', 'env'], { env });
  assert.equal(keys.status, 0, keys.stderr);
  assert.match(keys.stdout, new RegExp(`^PUBLISHABLE_KEY=${th.info.PUBLISHABLE_KEY}$`, 'm'));
});

test('login at a terminal asks for e-mail and password (the password masked)', async () => {
  const env = remoteEnv(th);
  delete env.HEARTH_ACCESS_TOKEN;
  // A pseudo-terminal from util-linux's `script`, as a user's shell gives.
  const child = spawn('script', ['-qfec', `'${process.execPath}' '${bin}' login --url '${th.url}'`, '/dev/null'], {
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let screen = '';
  let step = 0;
  child.stdout.on('data', (c: Buffer) => {
    screen += c;
    if (step === 0 && screen.includes('E-mail')) {
      step = 1;
      child.stdin.write('owner@example.com\r');
    } else if (step === 1 && screen.includes('Password')) {
      step = 2;
      child.stdin.write('correct horse battery 9\r');
    }
  });
  const status = await new Promise((resolve) => child.on('close', resolve));
  assert.equal(status, 0, screen);
  assert.match(screen, /Logged in to http:\/\/\S+ as owner@example\.com/);
  assert.ok(!screen.includes('correct horse'), 'the password is not shown');
  const saved = JSON.parse(readFileSync(path.join(env.XDG_CONFIG_HOME!, 'hearth', 'credentials.json'), 'utf8'));
  assert.equal(saved.email, 'owner@example.com');
});

test('projects create, list, link, keys of the linked project, delete', async () => {
  const env = await loggedIn();
  const created = await runHearth(['projects', 'create', 'Shop', '-o', 'json'], { env });
  assert.equal(created.status, 0, created.stderr);
  const project = JSON.parse(created.stdout);
  assert.equal(project.name, 'Shop');

  const table = await runHearth(['projects', 'list'], { env });
  assert.match(table.stdout, /^REF\s+NAME\s+DEFAULT\s+BASE_URL/);
  assert.match(table.stdout, new RegExp(`^${project.ref}\\s+Shop\\s+http`, 'm'));

  const app = mkdtempSync(path.join(tmpdir(), 'hearth-app-'));
  const link = await runHearth(['link', '--project-ref', project.ref], { env, cwd: app });
  assert.equal(link.status, 0, link.stderr);
  assert.equal(readFileSync(path.join(app, 'hearth', '.temp', 'project-ref'), 'utf8').trim(), project.ref);
  // Linked before `hearth init`: the link is still kept out of git.
  assert.equal(readFileSync(path.join(app, 'hearth', '.gitignore'), 'utf8'), '.temp/\n');
  const keys = await runHearth(['keys', '-o', 'json'], { env, cwd: app });
  const listed = (await th.api('GET', `/v1/projects/${project.ref}/api-keys`)).body;
  assert.deepEqual(JSON.parse(keys.stdout), listed);
  const keyTable = await runHearth(['keys'], { env, cwd: app });
  assert.match(keyTable.stdout, /^NAME\s+TYPE\s+API_KEY\n/);
  assert.ok(keyTable.stdout.includes(listed[0].api_key));

  // The local server's status for that project, and a ref it does not have.
  const status = await runHearth(['status', '-o', 'json', '--project-ref', project.ref], { env: localEnv(th) });
  assert.equal(status.status, 0, status.stderr);
  const info = JSON.parse(status.stdout);
  assert.equal(info.PROJECT_REF, project.ref);
  assert.equal(info.PUBLISHABLE_KEY, listed.find((k: { type: string }) => k.type === 'publishable').api_key);
  const none = await runHearth(['status', '--project-ref', 'nosuchprojectatall00'], { env: localEnv(th) });
  assert.equal(none.status, 1);
  assert.match(none.stderr, /no project "nosuchprojectatall00"/);

  const refused = await runHearth(['projects', 'delete', project.ref], { env });
  assert.equal(refused.status, 1);
  assert.match(refused.stderr, /Pass --yes/);
  const del = await runHearth(['projects', 'delete', project.ref, '--yes'], { env });
  assert.equal(del.status, 0, del.stderr);
  assert.equal((await th.api('GET', `/v1/projects/${project.ref}`)).status, 404);
});

test('the local Hearth of the data folder without a login', async () => {
  const r = await runHearth(['keys', '-o', 'env'], { env: localEnv(th) });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(
    r.stdout,
    `BASE_URL=${th.info.BASE_URL}\nPROJECT_REF=${th.info.PROJECT_REF}\nPUBLISHABLE_KEY=${th.info.PUBLISHABLE_KEY}\nSECRET_KEY=${th.info.SECRET_KEY}\n`,
  );
});

test('one line each: unknown ref, expired login, a server that is not Hearth, nothing listening', async () => {
  const env = await loggedIn();
  const unknown = await runHearth(['keys', '--project-ref', 'nosuchprojectatall00'], { env });
  assert.equal(unknown.status, 1);
  assert.equal(
    unknown.stderr,
    `hearth: There is no project "nosuchprojectatall00" at ${th.url}: \`hearth projects list\` shows yours; pass --project-ref or run \`hearth link --project-ref <ref>\`.\n`,
  );

  const file = path.join(env.XDG_CONFIG_HOME!, 'hearth', 'credentials.json');
  writeFileSync(
    file,
    JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), access_token: 'expired-or-revoked' }),
  );
  const expired = await runHearth(['projects', 'list'], { env });
  assert.equal(expired.status, 1);
  assert.equal(
    expired.stderr,
    `hearth: Your login to ${th.url} has expired or was revoked: run \`hearth login --url ${th.url}\` again.\n`,
  );

  const other = createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'text/html' }).end('<html>hello</html>'),
  );
  await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
  const otherUrl = `http://127.0.0.1:${(other.address() as { port: number }).port}`;
  try {
    const notHearth = await runHearth(['login', '--url', otherUrl], { env: remoteEnv(th) });
    assert.equal(notHearth.status, 1);
    assert.match(
      notHearth.stderr,
      /^hearth: http:\/\/127\.0\.0\.1:\d+ does not answer as a Hearth server \(200 text\/html for the management API\): check the URL given to `hearth login --url`\.\n$/,
    );
  } finally {
    await new Promise((resolve) => other.close(resolve));
  }
  // The same port, now closed: nothing listens.
  const nothing = await runHearth(['projects', 'list'], { env: remoteEnv(th, { HEARTH_API_URL: otherUrl }) });
  assert.equal(nothing.status, 1);
  assert.equal(
    nothing.stderr,
    `hearth: Cannot reach ${otherUrl} (connect ECONNREFUSED ${otherUrl.slice(7)}). Check the URL given to \`hearth login --url\`.\n`,
  );
});
