/**
 * Workflow test helpers: enable the capability, publish, start, tick the
 * engine with the clock moved, read a run.
 */
import http from 'node:http';
import type { FunctionInvoker } from '../../src/workflows/steps/action.ts';
import { engineTick, type TickOptions } from '../../src/workflows/engine.ts';
import type { TestHearth } from '../helpers/hearth.ts';

export async function enableWorkflows(h: TestHearth, ref = h.info.PROJECT_REF): Promise<void> {
  const res = await h.api('PATCH', `/v1/projects/${ref}/config/workflows`, { body: { enabled: true } });
  if (res.status !== 200) throw new Error(`enable failed: ${res.status} ${JSON.stringify(res.body)}`);
}

export function wf(h: TestHearth, ref = h.info.PROJECT_REF) {
  const base = `/v1/projects/${ref}/workflows`;
  return {
    put: (name: string, body: unknown) => h.api('PUT', `${base}/${name}`, { body }),
    start: (name: string, body: unknown = {}) => h.api('POST', `${base}/${name}/runs`, { body }),
    run: async (name: string, id: string) => (await h.api('GET', `${base}/${name}/runs/${id}`)).body,
    signal: (name: string, id: string, body: unknown) => h.api('POST', `${base}/${name}/runs/${id}/signals`, { body }),
    cancel: (name: string, id: string) => h.api('POST', `${base}/${name}/runs/${id}/cancel`),
    /** Publishes and starts a run; returns its id. */
    async go(name: string, steps: unknown[], input: unknown = {}): Promise<string> {
      const put = await h.api('PUT', `${base}/${name}`, { body: { steps } });
      if (put.status !== 201) throw new Error(`PUT failed: ${JSON.stringify(put.body)}`);
      const res = await h.api('POST', `${base}/${name}/runs`, { body: { input } });
      if (res.status !== 201) throw new Error(`start failed: ${JSON.stringify(res.body)}`);
      return res.body.id;
    },
  };
}

/** One engine tick at the test clock's time. */
export function tick(h: TestHearth, opts: TickOptions = {}) {
  return engineTick(h.hearth.p, h.hearth.registry, h.clock.now(), opts);
}

/** Ticks (moving the clock by stepMs after each) until the run is final or `max` ticks pass. */
export async function settle(
  h: TestHearth,
  name: string,
  id: string,
  opts: { max?: number; stepMs?: number; invoker?: FunctionInvoker | null } = {},
) {
  const w = wf(h);
  let run = await w.run(name, id);
  for (let i = 0; i < (opts.max ?? 40); i++) {
    if (['succeeded', 'failed', 'cancelled'].includes(run.status) && run.compensation.state !== 'running') break;
    await tick(h, { invoker: opts.invoker });
    h.clock.advance(opts.stepMs ?? 1000);
    run = await w.run(name, id);
  }
  return run;
}

export interface DrainEvent {
  event: string;
  source: string;
  run_id: string;
  step?: string;
}

/** A local log-drain receiver collecting every shipped event. */
export async function startDrainReceiver(): Promise<{ url: string; got: DrainEvent[]; close(): Promise<void> }> {
  const got: DrainEvent[] = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      got.push(...JSON.parse(body));
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/logs`,
    got,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
