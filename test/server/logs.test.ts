/**
 * `hearth start` logs: JSON lines when HEARTH_LOG_FORMAT=json (the default
 * when stdout is not a terminal), readable lines with pretty, and with
 * HEARTH_ACCESS_LOG=1 one line per request without the query's values.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import postgres from 'postgres';
import { withDatabase } from '../../src/db/pools.ts';
import { randomToken } from '../../src/secrets.ts';
import { dropEverything, serverUrl } from '../helpers/hearth.ts';
import { freePorts } from '../helpers/ports.ts';
import { pathWithoutValues } from '../../src/server/logger.ts';

const runs: { controlDb: string; dataDir: string }[] = [];

after(async () => {
  for (const { controlDb, dataDir } of runs) {
    const control = postgres(withDatabase(serverUrl(), controlDb), { max: 1, onnotice: () => {} });
    const projects = await control`select db_name, owner_role from platform.projects`.catch(() => []);
    await control.end();
    await dropEverything(
      controlDb,
      projects.map((r) => ({ db: r.db_name as string, role: r.owner_role as string })),
    );
    rmSync(dataDir, { recursive: true, force: true });
  }
});

/** Starts `hearth start` with these variables; resolves once it is ready, with its output so far. */
async function start(env: Record<string, string>): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const run = {
    controlDb: `hearth_t_${randomToken(10, 'abcdefghijklmnopqrstuvwxyz')}`,
    dataDir: mkdtempSync(path.join(tmpdir(), 'hearth-logs-')),
  };
  runs.push(run);
  const [port] = await freePorts(1);
  const child = spawn(process.execPath, ['bin/hearth.js', 'start'], {
    env: {
      ...process.env,
      DATABASE_URL: serverUrl(),
      HEARTH_CONTROL_DB: run.controlDb,
      HEARTH_DATA_DIR: run.dataDir,
      HEARTH_PORT: String(port),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  await new Promise<void>((resolve, reject) => {
    const onData = (c: Buffer) => {
      out += c;
      if (out.includes('Ctrl-C stops')) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`hearth start exited ${code}:\n${out}`)));
  });
  return { child, url: `http://127.0.0.1:${port}`, output: () => out };
}

async function stop(child: ChildProcess): Promise<void> {
  child.removeAllListeners('exit');
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

test('the query values are dropped from logged paths', () => {
  assert.equal(pathWithoutValues('/rest/v1/items?select=*&id=eq.5&order'), '/rest/v1/items?select&id&order');
  assert.equal(pathWithoutValues('/health'), '/health');
});

test('json lines, and one access line per request with HEARTH_ACCESS_LOG=1', { timeout: 120_000 }, async () => {
  const h = await start({ HEARTH_LOG_FORMAT: 'json', HEARTH_ACCESS_LOG: '1', HEARTH_LOG_LEVEL: 'info' });
  try {
    const res = await fetch(`${h.url}/v1/projects?secret=hunter2`, { headers: { authorization: 'Bearer nope' } });
    assert.equal(res.status, 401);
    const line = await waitFor(h.output, (l) => l.msg === 'request');
    const { method, path: logged, status, project } = line;
    assert.deepEqual(
      { method, path: logged, status, project },
      { method: 'GET', path: '/v1/projects?secret', status: 401, project: null },
    );
    assert.equal(typeof line.ms, 'number');
    assert.ok(!h.output().includes('hunter2'));
  } finally {
    await stop(h.child);
  }
});

test('readable lines with HEARTH_LOG_FORMAT=pretty; no access lines without HEARTH_ACCESS_LOG', {
  timeout: 120_000,
}, async () => {
  const h = await start({ HEARTH_LOG_FORMAT: 'pretty', HEARTH_LOG_LEVEL: 'info' });
  try {
    await fetch(`${h.url}/health`);
    await stop(h.child);
    const lines = h
      .output()
      .split('\n')
      .filter((l) => /\b(INFO|WARN)\b/.test(l));
    assert.ok(lines.length > 0, h.output());
    assert.match(lines[0]!, /^\[\d\d:\d\d:\d\d\.\d{3}\] (INFO|WARN)/);
    assert.ok(
      !h
        .output()
        .split('\n')
        .some((l) => l.startsWith('{')),
      'no JSON lines',
    );
    assert.ok(!/INFO.*: request$/m.test(h.output()), 'no access lines');
  } finally {
    if (h.child.exitCode === null) await stop(h.child);
  }
});

async function waitFor(
  output: () => string,
  match: (line: Record<string, unknown>) => boolean,
): Promise<Record<string, unknown>> {
  for (let waited = 0; waited < 10_000; waited += 50) {
    for (const text of output().split('\n')) {
      if (!text.startsWith('{')) continue;
      const line = JSON.parse(text) as Record<string, unknown>;
      if (match(line)) return line;
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no such log line in:\n${output()}`);
}
