/**
 * One joined channel of one socket: its caller (role and claims, from the
 * join's access_token or the socket's key), broadcast and presence options,
 * private-channel policies and postgres_changes bindings; and the events a
 * client sends on it (broadcast, presence, access_token, phx_leave).
 */
import { randomUUID } from 'node:crypto';
import type { Caller } from '../db/with-role.ts';
import { HearthError } from '../errors.ts';
import { channelPolicies, OPEN, type Policies } from './authorization.ts';
import type { Clock } from '../context.ts';
import { topicKeyOf, type PresenceDiff, type ProjectHub } from './hub.ts';
import { BindingError, parseBindings, type Binding } from './postgres-changes.ts';
import type { Message, UserBroadcast } from './protocol.ts';
import { isObject } from '../rest/errors.ts';

/** A refusal sent as an error reply; `reason` starts with a code, as Supabase's do. */
export class Refusal extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(`${code}: ${message}`);
  }
}

const MAX_TOPIC_BYTES = 255;

/**
 * What a channel needs of the socket it was joined on (Connection, in
 * src/realtime/connection.ts, which imports this module: an interface here
 * keeps the two from importing each other).
 */
export interface ChannelSocket {
  readonly clock: Clock;
  callerFor(token: string | null): Promise<{ caller: Caller; exp: number | null }>;
  hub(): Promise<ProjectHub>;
  sendMessage(joinRef: string | null, ref: string | null, topic: string, event: string, payloadJson: string): void;
  sendBroadcast(b: UserBroadcast): boolean;
  forget(ch: Channel): void;
}

export class Channel {
  readonly subTopic: string;
  readonly topicKey: string;
  presenceRef: string | null = null;
  claimsJson: string;
  private expiry: NodeJS.Timeout | null = null;
  private closed = false;

  private constructor(
    readonly conn: ChannelSocket,
    readonly hub: ProjectHub,
    readonly topic: string,
    readonly joinRef: string | null,
    readonly isPrivate: boolean,
    public caller: Caller,
    private policies: Policies,
    readonly bindings: Binding[],
    readonly selfBroadcast: boolean,
    readonly ack: boolean,
    public presenceEnabled: boolean,
    readonly presenceKey: string,
    /** config.broadcast.replication_ready: the join asked to be told when changes from the database flow. */
    readonly replicationReady = false,
  ) {
    this.subTopic = topic.slice('realtime:'.length);
    this.topicKey = topicKeyOf(this.subTopic, isPrivate);
    this.claimsJson = JSON.stringify(caller.claims);
  }

  /** Checks a phx_join and joins; a Refusal says why not. */
  static async join(conn: ChannelSocket, msg: Message): Promise<Channel> {
    const topic = msg.topic;
    if (Buffer.byteLength(topic) > MAX_TOPIC_BYTES)
      throw new Refusal('TopicTooLong', `a topic is at most ${MAX_TOPIC_BYTES} bytes`);
    if (!topic.startsWith('realtime:') || topic === 'realtime:')
      throw new Refusal('UnknownTopic', 'topics are "realtime:<name>"');
    const config = isObject(msg.payload.config) ? msg.payload.config : {};
    const broadcast = isObject(config.broadcast) ? config.broadcast : {};
    const presence = isObject(config.presence) ? config.presence : {};
    const isPrivate = config.private === true;
    const token = msg.payload.access_token;
    const { caller, exp } = await conn.callerFor(typeof token === 'string' ? token : null);
    const hub = await conn.hub();
    const subTopic = topic.slice('realtime:'.length);
    let policies = OPEN;
    if (isPrivate) {
      policies = await channelPolicies(hub.sql, caller, subTopic);
      if (!policies.broadcastRead && !policies.presenceRead) {
        throw new Refusal('Unauthorized', `You do not have permissions to read from this Channel topic: ${subTopic}`);
      }
    }
    let bindings: Binding[];
    try {
      bindings = await parseBindings(config.postgres_changes, caller.role, hub.relations, hub.sql);
    } catch (err) {
      if (err instanceof BindingError) throw new Refusal('InvalidPostgresChanges', err.message);
      throw err;
    }
    const key = typeof presence.key === 'string' && presence.key ? presence.key.slice(0, 255) : randomUUID();
    const ch = new Channel(
      conn,
      hub,
      topic,
      msg.join_ref ?? msg.ref,
      isPrivate,
      caller,
      policies,
      bindings,
      broadcast.self === true,
      broadcast.ack === true,
      presence.enabled === true,
      key,
      broadcast.replication_ready === true || broadcast.replication_ready === 'true',
    );
    ch.armExpiry(exp);
    return ch;
  }

  joinResponse(): Record<string, unknown> {
    return { postgres_changes: this.bindings.map((b) => ({ ...b.echo, id: b.id })) };
  }

  /**
   * After the ok reply: the replication-ready notice, the postgres_changes
   * confirmation and the presence state, as Supabase sends them. The relay
   * from the database (hub.ready) is listening before a join is answered, so
   * a channel that asked is told at once.
   */
  async afterJoin(): Promise<void> {
    if (this.replicationReady) this.systemMessage('system', 'ok', 'Replication connection established');
    if (this.bindings.length) this.systemMessage('postgres_changes', 'ok', 'Subscribed to PostgreSQL');
    if (this.presenceEnabled) await this.sendPresenceState();
  }

  private async sendPresenceState(): Promise<void> {
    if (!this.policies.presenceRead) return;
    const state = await this.hub.presenceState(this.topicKey);
    this.push('presence_state', state);
  }

  // ---- outgoing

  push(event: string, payload: Record<string, unknown>): void {
    this.pushRaw(event, JSON.stringify(payload));
  }

  pushRaw(event: string, payloadJson: string): void {
    if (this.closed) return;
    this.conn.sendMessage(this.joinRef, null, this.topic, event, payloadJson);
  }

  systemMessage(extension: string, status: 'ok' | 'error', message: string): void {
    this.push('system', { extension, status, message, channel: this.subTopic });
  }

  receiveBroadcast(b: UserBroadcast): void {
    if (this.closed || !this.policies.broadcastRead) return;
    if (!this.conn.sendBroadcast(b))
      this.systemMessage(
        'broadcast',
        'error',
        `A binary broadcast on "${this.subTopic}" cannot be delivered over protocol 1.0.0; connect with vsn=2.0.0.`,
      );
  }

  receivePresenceDiff(diff: PresenceDiff): void {
    if (this.presenceEnabled && this.policies.presenceRead)
      this.push('presence_diff', diff as unknown as Record<string, unknown>);
  }

  // ---- incoming

  /** An event on this joined channel; returns the reply's response, or null for no reply. */
  async handle(msg: Message): Promise<Record<string, unknown> | null> {
    switch (msg.event) {
      case 'broadcast':
        return this.broadcast(msg.payload);
      case 'presence':
        return this.presence(msg.payload);
      case 'access_token':
        await this.swapToken(msg.payload.access_token);
        return null;
      default:
        throw new Refusal(
          'UnknownEvent',
          `unknown event "${msg.event.slice(0, 100)}" on a channel; events are broadcast, presence, access_token, phx_leave`,
        );
    }
  }

  private async broadcast(payload: Record<string, unknown>): Promise<Record<string, unknown> | null> {
    if (typeof payload.event !== 'string')
      throw new Refusal('InvalidBroadcast', 'a broadcast needs {type: "broadcast", event, payload}');
    const body = JSON.stringify(payload.payload ?? {});
    return this.sendBroadcast({ topic: this.topic, event: payload.event, body, encoding: 'json' });
  }

  /** A broadcast from this channel's client (JSON push or binary frame). */
  async sendBroadcast(b: UserBroadcast): Promise<Record<string, unknown> | null> {
    if (!this.policies.broadcastWrite)
      throw new Refusal('Unauthorized', `You do not have permissions to write to this Channel topic: ${this.subTopic}`);
    if (Buffer.byteLength(b.event) > 255)
      throw new Refusal('InvalidBroadcast', 'a broadcast event name is at most 255 bytes');
    await this.hub.broadcast(this, { ...b, topic: this.topic });
    return this.ack ? {} : null;
  }

  private async presence(payload: Record<string, unknown>): Promise<Record<string, unknown>> {
    const event = typeof payload.event === 'string' ? payload.event.toLowerCase() : '';
    if (event === 'track') {
      const meta = payload.payload ?? {};
      if (!isObject(meta)) throw new Refusal('InvalidPresence', 'Presence track payload must be a map');
      if (!this.policies.presenceWrite)
        throw new Refusal(
          'Unauthorized',
          `You do not have permissions to track presence on this Channel topic: ${this.subTopic}`,
        );
      const first = !this.presenceEnabled;
      this.presenceEnabled = true;
      await this.hub.track(this, meta);
      if (first) await this.sendPresenceState();
      return {};
    }
    if (event === 'untrack') {
      await this.hub.untrack(this);
      return {};
    }
    throw new Refusal('UnknownPresenceEvent', 'presence events are track and untrack');
  }

  /**
   * supabase-js sends the refreshed session token, and on signOut the
   * project's key: the channel becomes whoever the token makes, as a join
   * with it would (a key: its role; none: the socket's key). An invalid or
   * expired token ends the channel, as does one that may no longer read a
   * private topic.
   */
  private async swapToken(token: unknown): Promise<void> {
    let next: { caller: Caller; exp: number | null };
    try {
      next = await this.conn.callerFor(typeof token === 'string' ? token : null);
    } catch (err) {
      return this.shutdown(
        err instanceof Refusal || err instanceof HearthError ? err.message : 'The access token could not be checked.',
      );
    }
    if (this.isPrivate) {
      const policies = await channelPolicies(this.hub.sql, next.caller, this.subTopic);
      if (!policies.broadcastRead && !policies.presenceRead) {
        return this.shutdown(`You no longer have permission to read from this Channel topic: ${this.subTopic}`);
      }
      this.policies = policies;
    }
    this.caller = next.caller;
    this.claimsJson = JSON.stringify(next.caller.claims);
    this.armExpiry(next.exp);
  }

  private armExpiry(exp: number | null): void {
    if (this.expiry) clearTimeout(this.expiry);
    this.expiry = null;
    if (exp === null) return;
    const ms = exp * 1000 - this.conn.clock.now().getTime();
    // (setTimeout's longest delay is about 24.8 days.)
    this.expiry = setTimeout(
      () => this.shutdown('Token has expired: refresh the session and send the new access_token.'),
      Math.min(Math.max(ms, 0), 2 ** 31 - 1),
    );
    this.expiry.unref();
  }

  /** Ends the channel from the server: a system error saying why, then phx_close. */
  shutdown(reason: string): void {
    if (this.closed) return;
    this.systemMessage('system', 'error', reason);
    this.pushRaw('phx_close', '{}');
    this.conn.forget(this);
  }

  /** Ends the channel with phx_error: realtime-js rejoins. */
  fail(reason: string): void {
    if (this.closed) return;
    this.systemMessage('system', 'error', reason);
    this.pushRaw('phx_error', '{}');
    this.conn.forget(this);
  }

  /** Removes the channel everywhere (its presence leaves). Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.expiry) clearTimeout(this.expiry);
    this.hub.remove(this);
    if (this.presenceRef) void this.hub.untrack(this).catch(() => {});
  }
}
