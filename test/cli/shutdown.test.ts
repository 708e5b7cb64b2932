/**
 * How `hearth start` stops when a request never finishes (a client that sends
 * part of its body and waits): the drain is bounded, and a second signal exits
 * at once; either way the embedded PostgreSQL is stopped, never left running.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { DRAIN_SECONDS } from '../../src/server/runtime.ts';
import { until } from '../helpers/poll.ts';
import { embeddedStartEnv } from '../helpers/ports.ts';

const dataDir = mkdtempSync(path.join(tmpdir(), 'hearth-shutdown-'));
const { env, port } = await embeddedStartEnv(dataDir);
const postmasterPid = path.join(dataDir, 'pg', 'postmaster.pid');

const children: ChildProcess[] = [];

after(() => {
  // A failed test may leave its Hearth running, and with it PostgreSQL: stop both.
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  if (existsSync(postmasterPid)) process.kill(Number(readFileSync(postmasterPid, 'utf8').split('\n')[0]), 'SIGINT');
  const cluster = path.join(dataDir, 'pg');
  if (existsSync(cluster)) rmSync(realpathSync(cluster), { recursive: true, force: true });
  rmSync(dataDir, { recursive: true, force: true });
});

async function start(): Promise<{ child: ChildProcess; exited: Promise<number | null>; secretKey: string }> {
  const child = spawn(process.execPath, ['bin/hearth.js', 'start'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let output = '';
  const ready = await new Promise<boolean>((resolve) => {
    const onData = (c: Buffer) => {
      output += c;
      if (output.includes('Ctrl-C stops')) resolve(true);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    void exited.then(() => resolve(false));
  });
  assert.ok(ready, `hearth start failed:\n${output}`);
  return { child, exited, secretKey: /Secret key\s+(\S+)/.exec(output)![1]! };
}

/**
 * A request whose body never arrives whole: the server waits for the rest until the
 * connection goes. Returned once the server has read its headers (it answers `Expect:
 * 100-continue`), so it is in flight; `closed` gives all the server sent on it.
 */
async function requestThatNeverEnds(secretKey: string): Promise<{ closed: Promise<string> }> {
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => {});
  let answer = '';
  const closed = new Promise<string>((resolve) => socket.once('close', () => resolve(answer)));
  await new Promise<void>((resolve) => {
    socket.on('data', (chunk) => {
      answer += chunk;
      if (answer.includes('100 Continue')) resolve();
    });
    socket.write(
      `POST /storage/v1/bucket HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${secretKey}\r\n` +
        'content-type: application/json\r\ncontent-length: 1000\r\nexpect: 100-continue\r\n\r\n',
    );
  });
  socket.write('{"name":');
  return { closed };
}

const refused = () =>
  fetch(`http://127.0.0.1:${port}/health`).then(
    () => false,
    () => true,
  );

test(`a stop waits at most ${DRAIN_SECONDS} s for in-flight requests, then closes them and stops PostgreSQL cleanly`, {
  timeout: 180_000,
}, async () => {
  const { child, exited, secretKey } = await start();
  const { closed } = await requestThatNeverEnds(secretKey);
  const signalled = Date.now();
  child.kill('SIGTERM');
  const hung = new Promise((resolve) => setTimeout(resolve, (DRAIN_SECONDS + 15) * 1000, 'still running'));
  assert.equal(await Promise.race([exited, hung]), 0);
  const took = (Date.now() - signalled) / 1000;
  assert.ok(
    took >= DRAIN_SECONDS - 1,
    `the in-flight request was given its ${DRAIN_SECONDS} s (exited after ${took} s)`,
  );
  assert.doesNotMatch(await closed, /HTTP\/1\.1 [2-5]\d\d/, 'the connection was closed unanswered');
  assert.equal(existsSync(postmasterPid), false, 'PostgreSQL stopped cleanly');
});

test('a second signal while draining exits at once, and still stops PostgreSQL', { timeout: 180_000 }, async () => {
  const { child, exited, secretKey } = await start();
  await requestThatNeverEnds(secretKey);
  child.kill('SIGTERM');
  assert.equal(await until(refused, (r) => r, 10_000), true, 'the drain began');
  const signalled = Date.now();
  child.kill('SIGTERM');
  const hung = new Promise((resolve) => setTimeout(resolve, 5000, 'still running 5 s after the second signal'));
  assert.equal(await Promise.race([exited, hung]), 1);
  assert.ok(Date.now() - signalled < DRAIN_SECONDS * 1000);
  assert.equal(existsSync(postmasterPid), false, 'PostgreSQL was stopped');
});
