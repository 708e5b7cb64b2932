/**
 * One client socket: decodes frames in its protocol version, answers
 * heartbeats at once, joins and leaves channels and hands their events to
 * them, in order within a topic (one frame at a time) while topics go on side
 * by side, as each Phoenix channel is a process of its own: a join waiting on
 * a slow RLS policy holds up its own topic only. Every refusal is a phx_reply with status
 * "error" and a reason that starts with a code; a frame that cannot be read
 * at all gets the same on the topic "phoenix". Outgoing data beyond
 * MAX_BUFFERED_BYTES not yet taken by the client ends the socket.
 */
import type { WebSocket } from 'ws';
import type { Clock } from '../context.ts';
import type { Caller } from '../db/with-role.ts';
import { HearthError } from '../errors.ts';
import type { ProjectRegistry, ProjectRuntime } from '../platform/registry.ts';
import { verifyAccessToken, type DataPlaneAuth } from '../http/credentials.ts';
import { Channel, Refusal } from './channel.ts';
import type { ProjectHub } from './hub.ts';
import type { Gauge, PerSecond } from './limits.ts';
import {
  decodeBinary,
  decodeText,
  encodeBroadcast,
  FrameError,
  reply,
  type Message,
  type UserBroadcast,
  type Vsn,
} from './protocol.ts';
import type { RealtimeLimits } from './settings.ts';

/** Tests shorten these. */
export const socketLimits = {
  /** A client's outgoing buffer past this is a slow client: the socket is closed. */
  maxBufferedBytes: 8 * 1024 * 1024,
  /** Frames received and not yet handled (e.g. behind slow joins) past this are refused. */
  maxQueuedFrames: 1000,
};

/** config/realtime `enabled` is false: joins are refused with it, and open sockets closed with its text. */
export const disabled = () =>
  new Refusal('RealtimeDisabledForTenant', 'Realtime is disabled for this project (config/realtime enabled)');

/** A frame as read: a binary broadcast (vsn 2.0.0) or a text message. */
type Frame = { kind: 'binary'; push: ReturnType<typeof decodeBinary> } | { kind: 'text'; msg: Message };

export interface ConnectionDeps {
  registry: ProjectRegistry;
  clock: Clock;
  hubOf(project: ProjectRuntime): ProjectHub;
  limits(project: ProjectRuntime): Promise<RealtimeLimits>;
  joins: PerSecond;
  events: PerSecond;
  sockets: Gauge;
  log: { warn(obj: unknown, msg: string): void; error(obj: unknown, msg: string): void };
}

export class Connection {
  readonly channels = new Map<string, Channel>();
  lastSeen = Date.now();
  /** Per topic, the last frame waiting or being handled: the next one on that topic runs after it. */
  private readonly queues = new Map<string, Promise<void>>();
  private queued = 0;
  /** Joins under way (authorising), counted against the channel limit. */
  private joining = 0;
  private closed = false;

  constructor(
    readonly ws: WebSocket,
    readonly vsn: Vsn,
    readonly project: ProjectRuntime,
    /** The caller the socket's apikey makes (anon or service_role). */
    private readonly keyAuth: DataPlaneAuth,
    private readonly deps: ConnectionDeps,
    /** Set when the socket is over a project limit: every join is refused with it. */
    private readonly refusal: Refusal | null,
  ) {
    ws.on('message', (data, isBinary) => this.onFrame(data as Buffer, isBinary));
    ws.on('close', () => this.onClose());
    ws.on('error', () => this.onClose());
  }

  get clock(): Clock {
    return this.deps.clock;
  }

  /** The project's hub, through the registry: a runtime rebuilt since the socket opened (keys rotated) has a hub of its own. */
  async hub(): Promise<ProjectHub> {
    const project = await this.deps.registry.byReference(this.project.ref);
    if (!project) throw new Refusal('TenantNotFound', 'this project no longer exists');
    const hub = this.deps.hubOf(project);
    await hub.ready();
    return hub;
  }

  // ---- sending

  private sendFrame(frame: string | Buffer): void {
    if (this.closed) return;
    if (this.ws.bufferedAmount > socketLimits.maxBufferedBytes) {
      this.deps.log.warn(
        { project: this.project.ref, buffered: this.ws.bufferedAmount },
        'realtime: slow client disconnected',
      );
      this.ws.terminate();
      this.onClose();
      return;
    }
    this.ws.send(frame);
  }

  sendMessage(joinRef: string | null, ref: string | null, topic: string, event: string, payloadJson: string): void {
    const frame =
      this.vsn === '2.0.0'
        ? `[${JSON.stringify(joinRef)},${JSON.stringify(ref)},${JSON.stringify(topic)},${JSON.stringify(event)},${payloadJson}]`
        : `{"join_ref":${JSON.stringify(joinRef)},"ref":${JSON.stringify(ref)},"topic":${JSON.stringify(topic)},"event":${JSON.stringify(event)},"payload":${payloadJson}}`;
    this.sendFrame(frame);
  }

  /** False when the broadcast cannot be carried by this socket's protocol. */
  sendBroadcast(b: UserBroadcast): boolean {
    const frame = encodeBroadcast(this.vsn, b);
    if (frame === null) return false;
    this.sendFrame(frame);
    return true;
  }

  private reply(
    msg: { join_ref: string | null; ref: string | null; topic: string },
    status: 'ok' | 'error',
    response: Record<string, unknown>,
  ): void {
    this.sendFrame(reply(this.vsn, msg.join_ref, msg.ref, msg.topic, status, response));
  }

  // ---- receiving

  private onFrame(data: Buffer, isBinary: boolean): void {
    this.lastSeen = Date.now();
    if (this.closed) return;
    const frame = this.decodeFrame(data, isBinary);
    if (!frame) return;
    if (frame.kind === 'text' && frame.msg.topic === 'phoenix' && frame.msg.event === 'heartbeat') {
      this.reply(frame.msg, 'ok', {});
      return;
    }
    if (this.queued >= socketLimits.maxQueuedFrames) {
      this.reply({ join_ref: null, ref: null, topic: 'phoenix' }, 'error', {
        reason: `TooManyPendingMessages: more than ${socketLimits.maxQueuedFrames} messages are waiting on this socket`,
      });
      return;
    }
    this.queued++;
    const topic = frame.kind === 'text' ? frame.msg.topic : frame.push.broadcast.topic;
    const handled = (this.queues.get(topic) ?? Promise.resolve())
      .then(() => this.handleFrame(frame, data.length))
      .catch((err) => this.deps.log.error({ err }, 'realtime: a frame failed'))
      .finally(() => {
        this.queued--;
        if (this.queues.get(topic) === handled) this.queues.delete(topic);
      });
    this.queues.set(topic, handled);
  }

  /** The frame read, or null once a frame that cannot be read has had its error reply. */
  private decodeFrame(data: Buffer, isBinary: boolean): Frame | null {
    try {
      if (!isBinary) return { kind: 'text', msg: decodeText(this.vsn, data.toString('utf8')) };
      if (this.vsn !== '2.0.0') throw new FrameError('binary frames need vsn=2.0.0');
      return { kind: 'binary', push: decodeBinary(data) };
    } catch (err) {
      this.reply({ join_ref: null, ref: null, topic: 'phoenix' }, 'error', {
        reason: `MalformedMessage: ${(err as Error).message}`,
      });
      return null;
    }
  }

  private async handleFrame(frame: Frame, size: number): Promise<void> {
    if (this.closed) return;
    const limits = await this.deps.limits(this.project);
    if (frame.kind === 'binary') {
      const { push } = frame;
      const target = { join_ref: push.join_ref, ref: push.ref, topic: push.broadcast.topic };
      return this.guard(target, async () => {
        const ch = this.joined(push.broadcast.topic);
        this.checkEvent(limits, size);
        return ch.sendBroadcast(push.broadcast);
      });
    }
    const { msg } = frame;
    if (msg.event === 'phx_join') return this.guard(msg, () => this.join(msg, limits));
    if (msg.event === 'phx_leave') {
      const ch = this.channels.get(msg.topic);
      if (ch) this.forget(ch);
      return this.reply(msg, 'ok', {});
    }
    return this.guard(msg, async () => {
      const ch = this.joined(msg.topic);
      this.checkEvent(limits, size);
      return ch.handle(msg);
    });
  }

  /** Runs fn and replies with its response (none for null); a Refusal or HearthError is an error reply. */
  private async guard(
    msg: { join_ref: string | null; ref: string | null; topic: string },
    fn: () => Promise<Record<string, unknown> | null>,
  ): Promise<void> {
    try {
      const response = await fn();
      if (response) this.reply(msg, 'ok', response);
    } catch (err) {
      if (err instanceof Refusal) return this.reply(msg, 'error', { reason: err.message });
      if (err instanceof HearthError) return this.reply(msg, 'error', { reason: `${err.code}: ${err.message}` });
      this.deps.log.error({ err, topic: msg.topic.slice(0, 300) }, 'realtime: a message failed');
      this.reply(msg, 'error', { reason: 'InternalError: the message could not be handled; see the server log' });
    }
  }

  private joined(topic: string): Channel {
    const ch = this.channels.get(topic);
    if (!ch) throw new Refusal('UnmatchedTopic', 'join the channel before sending on it (unmatched topic)');
    return ch;
  }

  private checkEvent(limits: RealtimeLimits, size: number): void {
    if (size > limits.maxPayloadBytes)
      throw new Refusal(
        'PayloadTooLarge',
        `a message is at most ${limits.maxPayloadBytes} bytes (config/realtime max_payload_size_in_kb)`,
      );
    if (!this.deps.events.take(this.project.id, limits.maxEventsPerSecond)) {
      throw new Refusal(
        'RateLimitReached',
        `Too many messages per second (config/realtime max_events_per_second is ${limits.maxEventsPerSecond})`,
      );
    }
  }

  /** Replies itself (the ok reply must go out before the presence state). */
  private async join(msg: Message, limits: RealtimeLimits): Promise<null> {
    if (this.refusal) throw this.refusal;
    if (!limits.enabled) throw disabled();
    const existing = this.channels.get(msg.topic);
    if (existing) this.forget(existing); // a second join of a topic replaces the first, as in Phoenix
    // (Joins of other topics run alongside: those still under way hold their place.)
    if (this.channels.size + this.joining >= limits.maxChannelsPerClient) {
      throw new Refusal(
        'ChannelRateLimitReached',
        `Too many channels on this socket (config/realtime max_channels_per_client is ${limits.maxChannelsPerClient})`,
      );
    }
    if (!this.deps.joins.take(this.project.id, limits.maxJoinsPerSecond)) {
      throw new Refusal(
        'ClientJoinRateLimitReached',
        `Too many joins per second (config/realtime max_joins_per_second is ${limits.maxJoinsPerSecond})`,
      );
    }
    this.joining++;
    const ch = await Channel.join(this, msg).finally(() => void this.joining--);
    if (this.closed) {
      ch.close();
      return null;
    }
    this.channels.set(ch.topic, ch);
    ch.hub.add(ch);
    this.reply(msg, 'ok', ch.joinResponse());
    await ch.afterJoin();
    return null;
  }

  /**
   * The caller of a join or token swap: a user access token of this project
   * (its role and claims, expiring with it), a key of this project, or, with
   * no token, the socket's key.
   */
  async callerFor(token: string | null): Promise<{ caller: Caller; exp: number | null }> {
    if (!token) return { caller: this.keyAuth.caller, exp: null };
    if (token.startsWith('sb_')) {
      const key = await this.deps.registry.resolveKey(token);
      if (!key || key.projectId !== this.project.id)
        throw new Refusal('InvalidJWTToken', 'the access_token is not a key of this project');
      const role = key.type === 'secret' ? 'service_role' : 'anon';
      return { caller: { role, claims: { role, iss: 'hearth', ref: this.project.ref } }, exp: null };
    }
    let claims: Awaited<ReturnType<typeof verifyAccessToken>>;
    try {
      const project = (await this.deps.registry.byReference(this.project.ref)) ?? this.project;
      claims = await verifyAccessToken(project, token, this.deps.clock);
    } catch (err) {
      if (err instanceof HearthError) throw new Refusal('InvalidJWTToken', err.message);
      throw err;
    }
    const role = claims.role;
    if (role !== 'anon' && role !== 'authenticated' && role !== 'service_role')
      throw new Refusal('InvalidJWTToken', 'the access token carries an unknown role');
    if (typeof claims.exp !== 'number')
      throw new Refusal('InvalidJWTToken', 'Fields `role` and `exp` are required in JWT');
    return { caller: { role, claims: claims as Record<string, unknown> }, exp: claims.exp };
  }

  /** Drops a channel from this socket and its hub. */
  forget(ch: Channel): void {
    if (this.channels.get(ch.topic) === ch) this.channels.delete(ch.topic);
    ch.close();
  }

  /** Ends the socket (server shutdown, heartbeat timeout, realtime disabled), first telling each channel why if asked. */
  end(code: number, reason: string, tellChannels = false): void {
    if (this.closed) return;
    if (tellChannels) for (const ch of this.channels.values()) ch.systemMessage('system', 'error', reason);
    this.ws.close(code, reason);
    this.onClose();
  }

  private onClose(): void {
    if (this.closed) return;
    this.closed = true;
    for (const ch of this.channels.values()) ch.close();
    this.channels.clear();
    this.deps.sockets.add(this.project.id, -1);
  }
}
