/**
 * `hearth start` logs: JSON lines when HEARTH_LOG_FORMAT=json (the default
 * when stdout is not a terminal), readable lines with pretty, and with
 * HEARTH_ACCESS_LOG=1 one line per request without the query's values.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pathWithoutValues } from '../../src/server/logger.ts';
import { startSpawned as start, stopSpawned as stop } from '../helpers/spawned-hearth.ts';

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
