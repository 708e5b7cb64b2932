/**
 * The realtime WebSocket endpoint on the HTTP server:
 * `{base}/realtime/v1/websocket?apikey=<key>&vsn=1.0.0|2.0.0`, at the root for
 * the default project, under /project/{ref}/ and at {ref}.{HEARTH_PROJECT_DOMAIN}
 * like every data-plane area. The key (query `apikey`, or the apikey header)
 * must belong to the addressed project; a refused upgrade is an HTTP error
 * with a JSON body. Sockets silent for longer than the heartbeat timeout are
 * closed (realtime-js sends a heartbeat every 25 s).
 */
import { STATUS_CODES, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { Platform } from '../context.ts';
import type { ProjectRegistry, ProjectRuntime } from '../platform/registry.ts';
import { REF_SYMBOL, rewriteProjectUrl } from '../http/data-plane.ts';
import { authenticate } from '../http/credentials.ts';
import { fail, HearthError } from '../errors.ts';
import { Refusal } from './channel.ts';
import { Connection, disabled, type ConnectionDeps } from './connection.ts';
import { ProjectHub } from './hub.ts';
import { Gauge, PerSecond } from './limits.ts';
import type { Vsn } from './protocol.ts';
import { limitsOf } from './settings.ts';
import { lazy } from '../lazy.ts';

/** Tests shorten it. */
export const heartbeat = { timeoutMs: 60_000 };

const PATH = /^\/realtime\/v1\/websocket\/?$/;
/** Frames beyond this are refused by the socket itself (close 1009); per-project limits are lower. */
const MAX_FRAME_BYTES = 4 * 1024 * 1024;

/** The WebSocket library, loaded at the first upgrade: a server nobody subscribes to never holds it. */
const websockets = lazy(() => import('ws'));

export interface RealtimeServer {
  /** Client messages per project this second: sockets' events and HTTP broadcasts count against one max_events_per_second. */
  readonly events: PerSecond;
  close(): Promise<void>;
}

function refuse(socket: Duplex, { status, code, message }: HearthError): void {
  const body = JSON.stringify({ error: message, code, message });
  const reason = STATUS_CODES[status] ?? 'Error';
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

export function attachRealtime(app: FastifyInstance, p: Platform, registry: ProjectRegistry): RealtimeServer {
  let wss: import('ws').WebSocketServer | undefined;
  const connections = new Set<Connection>();
  const sockets = new Gauge();
  const rewrite = rewriteProjectUrl(p.config.projectDomain);
  const hubOf = (project: ProjectRuntime) =>
    project.cached(
      'realtime.hub',
      () => new ProjectHub(p, project),
      (hub) => hub.close(),
    );
  // Through the registry: a socket's runtime may have been replaced (keys rotated) and its settings no longer follow changes.
  const limitsOfProject = async (project: ProjectRuntime) =>
    limitsOf(await ((await registry.byReference(project.ref)) ?? project).settings('realtime'));
  const events = new PerSecond();
  const deps: ConnectionDeps = {
    registry,
    clock: p.clock,
    hubOf,
    limits: limitsOfProject,
    joins: new PerSecond(),
    events,
    sockets,
    log: p.log,
  };

  async function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const url = rewrite(req as unknown as { url?: string; headers: Record<string, unknown> });
    const parsed = new URL(url, 'http://x');
    if (!PATH.test(parsed.pathname))
      return refuse(
        socket,
        fail(
          'not_found',
          `No WebSocket endpoint at ${parsed.pathname.slice(0, 200)}; realtime is at /realtime/v1/websocket.`,
        ),
      );
    const vsn = parsed.searchParams.get('vsn') ?? '1.0.0';
    if (vsn !== '1.0.0' && vsn !== '2.0.0') return refuse(socket, fail('unsupported_vsn'));
    const ref = (req as unknown as Record<symbol, string | undefined>)[REF_SYMBOL];
    const project = await (ref ? registry.byReference(ref) : registry.defaultProject());
    if (!project)
      return refuse(
        socket,
        fail(
          'project_not_found',
          ref ? `There is no project with ref "${ref}".` : 'This server has no default project yet.',
        ),
      );
    const apikey = parsed.searchParams.get('apikey') ?? (req.headers.apikey as string | undefined);
    if (!apikey) return refuse(socket, fail('no_api_key', 'No API key: connect with ?apikey=<the project key>.'));
    let auth: Awaited<ReturnType<typeof authenticate>>;
    try {
      auth = await authenticate(registry, project, { apikey }, p.clock);
    } catch (err) {
      if (err instanceof HearthError) return refuse(socket, err);
      throw err;
    }
    if (!auth) return refuse(socket, fail('no_api_key', 'No API key: connect with ?apikey=<the project key>.'));
    const limits = limitsOf(await project.settings('realtime'));
    if (!limits.enabled) return refuse(socket, fail('realtime_disabled'));
    const { WebSocketServer } = await websockets();
    wss ??= new WebSocketServer({ noServer: true, maxPayload: MAX_FRAME_BYTES, perMessageDeflate: false });
    // Over the limit, the socket still opens, so the client hears why: every join is refused with it.
    const refusal =
      sockets.get(project.id) >= limits.maxConcurrentUsers
        ? new Refusal(
            'ConnectionRateLimitReached',
            `Too many connected users (config/realtime max_concurrent_users is ${limits.maxConcurrentUsers})`,
          )
        : null;
    wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.add(project.id, 1);
      const conn = new Connection(ws, vsn as Vsn, project, auth, deps, refusal);
      connections.add(conn);
      ws.on('close', () => connections.delete(conn));
    });
  }

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => {}); // a client vanishing mid-handshake
    upgrade(req, socket, head).catch((err) => {
      p.log.error({ err }, 'realtime: upgrade failed');
      refuse(socket, fail('unavailable'));
    });
  };
  app.server.on('upgrade', onUpgrade);

  // Disabling realtime (config/realtime enabled=false, announced to every process) disconnects the project's
  // sockets, as Supabase does a disabled tenant's; realtime-js retries and is refused until it is enabled again.
  const disconnectIfDisabled = async (projectId: string) => {
    const open = [...connections].filter((conn) => conn.project.id === projectId);
    if (!open.length || (await limitsOfProject(open[0]!.project)).enabled) return;
    // (The reason, 90 bytes, fits a close frame's 123.)
    for (const conn of open) conn.end(1008, disabled().message, true);
  };
  const unwatch = registry.watch((change) => {
    if (change.kind === 'config' && change.area === 'realtime')
      disconnectIfDisabled(change.projectId).catch((err) =>
        p.log.error({ err }, 'realtime: could not apply a config/realtime change to open sockets'),
      );
  });

  const sweep = setInterval(
    () => {
      const deadline = Date.now() - heartbeat.timeoutMs;
      for (const conn of connections)
        if (conn.lastSeen < deadline) conn.end(1000, 'heartbeat timeout: no message within the timeout');
    },
    Math.min(heartbeat.timeoutMs / 2, 5000),
  ).unref();

  return {
    events,
    async close() {
      unwatch();
      clearInterval(sweep);
      app.server.off('upgrade', onUpgrade);
      for (const conn of connections) conn.end(1001, 'server shutting down');
      connections.clear();
      wss?.close();
    },
  };
}
