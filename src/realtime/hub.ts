/**
 * One project's realtime on this process: its joined channels by topic, and
 * the relay through the project database that reaches every other Hearth
 * process. Each process LISTENs on `hearth_realtime`; a body is JSON with `k`:
 * 'b' a broadcast, 'p' a presence diff, 'c' a captured row change, 'r' a body
 * too large for NOTIFY, stored in realtime.relay under `id`. Broadcasts and
 * presence diffs from this process's own clients go to local channels at once
 * and carry `origin`, so this process skips them when they come back.
 */
import { randomUUID } from 'node:crypto';
import type { Platform } from '../context.ts';
import { listenOwnConnection } from '../db/listen.ts';
import type { Sql } from '../db/pools.ts';
import type { ProjectRuntime } from '../platform/registry.ts';
import type { Caller } from '../db/with-role.ts';
import { type PatternTest, runPatternTests } from './filters.ts';
import { bindingCovers, bindingMatches, changeJson, type Binding, type Change } from './postgres-changes.ts';
import type { UserBroadcast } from './protocol.ts';
import { RelationCache } from './relations.ts';
import { parseExact, restoreNumbers } from './values.ts';

export const RELAY_CHANNEL = 'hearth_realtime';

/** Tests shorten these. */
export const hubTimers = {
  /** How often a process confirms its presences are alive, and sweeps those of vanished processes. */
  presenceKeepaliveMs: 15_000,
  /** Presences not confirmed for this long belong to a process that is gone. */
  presenceStaleMs: 45_000,
  /** Relayed messages older than this are deleted. */
  relayRetentionMs: 10 * 60_000,
  /** A project with no channel on this process closes its relay connection after this long. */
  idleMs: 30_000,
};

/** Changes waiting for their RLS check beyond this are refused with a system message, not queued without bound. */
const MAX_PENDING_CHANGES = 10_000;

type Metas = Record<string, { metas: Record<string, unknown>[] }>;
export interface PresenceDiff {
  joins: Metas;
  leaves: Metas;
}

interface RelayBody {
  k: 'b' | 'p' | 'c' | 'r';
  origin?: string;
  [key: string]: unknown;
}

/**
 * What the hub needs of a joined channel (Channel, in src/realtime/channel.ts,
 * which imports this module: an interface here keeps the two from importing
 * each other).
 */
export interface Subscriber {
  readonly topicKey: string;
  readonly subTopic: string;
  readonly isPrivate: boolean;
  readonly selfBroadcast: boolean;
  readonly bindings: Binding[];
  readonly presenceKey: string;
  presenceRef: string | null;
  readonly caller: Caller;
  readonly claimsJson: string;
  systemMessage(extension: string, status: 'ok' | 'error', message: string): void;
  receiveBroadcast(b: UserBroadcast): void;
  receivePresenceDiff(diff: PresenceDiff): void;
  pushRaw(event: string, payloadJson: string): void;
  fail(reason: string): void;
}

export class ProjectHub {
  readonly node = randomUUID();
  readonly relations: RelationCache;
  private readonly topics = new Map<string, Set<Subscriber>>();
  private readonly changeChannels = new Set<Subscriber>();
  private listener: Promise<() => Promise<void>> | null = null;
  private ordered: Promise<void> = Promise.resolve();
  /** Set while a message too large for NOTIFY is read back: later ones wait behind it (onNotify). */
  private reading: Promise<void> | null = null;
  private pending = 0;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  private idleTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly p: Platform,
    readonly project: ProjectRuntime,
  ) {
    this.relations = new RelationCache(project.sql, p.clock);
  }

  get sql(): Sql {
    return this.project.sql;
  }

  /** Listening before the first channel joins, so nothing relayed after its join is missed. */
  ready(): Promise<unknown> {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = null;
    this.listener ??= listenOwnConnection(
      this.sql,
      RELAY_CHANNEL,
      (body) => this.onNotify(body),
      () => this.onListenerLost(),
    );
    this.listener.catch(() => (this.listener = null));
    this.timer ??= setInterval(
      () => void this.maintain().catch((err) => this.p.log.warn({ err }, 'realtime maintenance failed')),
      hubTimers.presenceKeepaliveMs,
    ).unref();
    return this.listener;
  }

  private onListenerLost(): void {
    this.listener = null;
    if (this.closed) return;
    // Notifications sent while no connection listened are lost: say so to every channel.
    for (const set of this.topics.values())
      for (const ch of set)
        ch.systemMessage(
          'system',
          'error',
          'The realtime relay connection to the database was lost; messages sent until it is back may be missing.',
        );
    this.ready().catch((err) =>
      this.p.log.warn({ err, project: this.project.ref }, 'realtime: the relay connection could not be restored'),
    );
  }

  add(ch: Subscriber): void {
    let set = this.topics.get(ch.topicKey);
    if (!set) this.topics.set(ch.topicKey, (set = new Set()));
    set.add(ch);
    if (ch.bindings.length) this.changeChannels.add(ch);
  }

  remove(ch: Subscriber): void {
    const set = this.topics.get(ch.topicKey);
    set?.delete(ch);
    if (set && !set.size) this.topics.delete(ch.topicKey);
    this.changeChannels.delete(ch);
    // With no channel left, the relay connection is closed after a while (idle projects hold no connection).
    if (!this.topics.size && !this.idleTimer) this.idleTimer = setTimeout(() => this.idle(), hubTimers.idleMs).unref();
  }

  private idle(): void {
    this.idleTimer = null;
    if (this.topics.size) return;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    const l = this.listener;
    this.listener = null;
    void l?.then((stop) => stop()).catch(() => {});
  }

  // ---- broadcast

  private deliverBroadcast(topicKey: string, b: UserBroadcast, except: Subscriber | null): void {
    const set = this.topics.get(topicKey);
    if (!set) return;
    for (const ch of set) if (ch !== except) ch.receiveBroadcast(b);
  }

  /** A client's broadcast: to this process's channels now, to the others through the relay. */
  async broadcast(from: Subscriber, b: UserBroadcast): Promise<void> {
    this.deliverBroadcast(from.topicKey, b, from.selfBroadcast ? null : from);
    const payload = b.encoding === 'json' ? (b.body as string) : 'null';
    const bin = b.encoding === 'binary' ? `,"bin":${JSON.stringify((b.body as Buffer).toString('base64'))}` : '';
    await this.send(
      `{"k":"b","origin":"${this.node}","topic":${JSON.stringify(from.subTopic)},"private":${from.isPrivate},"event":${JSON.stringify(b.event)}${bin},"payload":${payload}}`,
    );
  }

  /** Sends one relay body to every process (this one included). */
  send(body: string): Promise<void> {
    return this.sql`select realtime.relay_send(${body})`.then(() => {});
  }

  // ---- presence

  async track(ch: Subscriber, meta: Record<string, unknown>): Promise<void> {
    const ref = randomUUID();
    const full = { ...meta, phx_ref: ref };
    const previous = ch.presenceRef;
    ch.presenceRef = ref;
    const old = await this.sql.begin(async (tx) => {
      const [gone] = previous ? await tx`delete from realtime.presences where ref = ${previous} returning meta` : [];
      await tx`insert into realtime.presences (ref, topic, key, meta, node) values (${ref}, ${ch.topicKey}, ${ch.presenceKey}, ${tx.json(full as never)}, ${this.node})`;
      return gone as { meta: Record<string, unknown> } | undefined;
    });
    if (old) (full as Record<string, unknown>).phx_ref_prev = previous;
    const diff: PresenceDiff = {
      joins: { [ch.presenceKey]: { metas: [full] } },
      leaves: old ? { [ch.presenceKey]: { metas: [old.meta] } } : {},
    };
    await this.presenceDiff(ch.topicKey, diff);
  }

  async untrack(ch: Subscriber): Promise<void> {
    const ref = ch.presenceRef;
    if (!ref) return;
    ch.presenceRef = null;
    const [old] = await this.sql`delete from realtime.presences where ref = ${ref} returning meta`;
    if (old)
      await this.presenceDiff(ch.topicKey, {
        joins: {},
        leaves: { [ch.presenceKey]: { metas: [old.meta as Record<string, unknown>] } },
      });
  }

  private async presenceDiff(topicKey: string, diff: PresenceDiff): Promise<void> {
    this.deliverPresence(topicKey, diff);
    await this.send(JSON.stringify({ k: 'p', origin: this.node, topic: topicKey, ...diff }));
  }

  private deliverPresence(topicKey: string, diff: PresenceDiff): void {
    const set = this.topics.get(topicKey);
    if (set) for (const ch of set) ch.receivePresenceDiff(diff);
  }

  /** Everyone present on a topic, on every process, as presence_state shows it. */
  async presenceState(topicKey: string): Promise<Metas> {
    const rows = await this.sql`select key, meta from realtime.presences
      where topic = ${topicKey} and seen_at > now() - make_interval(secs => ${hubTimers.presenceStaleMs / 1000}) order by seen_at`;
    const state: Metas = {};
    for (const r of rows) (state[r.key as string] ??= { metas: [] }).metas.push(r.meta as Record<string, unknown>);
    return state;
  }

  /** Confirms this process's presences, drops those of processes gone (announcing their leaves), prunes old relayed rows. */
  private async maintain(): Promise<void> {
    await this.sql`update realtime.presences set seen_at = now() where node = ${this.node}`;
    const stale = await this.sql`delete from realtime.presences
      where seen_at < now() - make_interval(secs => ${hubTimers.presenceStaleMs / 1000}) returning topic, key, meta`;
    for (const r of stale) {
      await this.presenceDiff(r.topic as string, {
        joins: {},
        leaves: { [r.key as string]: { metas: [r.meta as Record<string, unknown>] } },
      });
    }
    await pruneRelayed(this.sql);
  }

  // ---- relay in

  /**
   * Notifications are handled in the order they were sent. One too large for
   * NOTIFY is read back from realtime.relay, and those after it wait for that
   * read: otherwise a large row's INSERT would reach clients after the UPDATE
   * and DELETE that followed it.
   */
  private onNotify(text: string): void {
    if (this.reading) {
      const next = this.reading.then(() => this.onRelay(text));
      this.reading = next;
      void next.then(() => {
        if (this.reading === next) this.reading = null;
      });
      return;
    }
    const read = this.onRelay(text);
    if (read) {
      this.reading = read;
      void read.then(() => {
        if (this.reading === read) this.reading = null;
      });
    }
  }

  /** Handles one message; a promise (never rejected) while a large one is read back. */
  private onRelay(text: string): Promise<void> | undefined {
    let body: RelayBody;
    try {
      body = JSON.parse(text) as RelayBody;
    } catch {
      return; // not ours: anyone may NOTIFY on a channel
    }
    if (body.k === 'r') {
      return this.sql`select body from realtime.relay where id = ${body.id as number}`.then(
        ([row]) => void (row && this.onRelay(row.body as string)),
        (err) => this.p.log.warn({ err }, 'realtime: a large relayed message could not be read'),
      );
    }
    if (body.origin === this.node) return;
    if (body.k === 'b') {
      const topic = String(body.topic);
      const key = topicKeyOf(topic, body.private === true);
      const b: UserBroadcast = body.bin
        ? {
            topic: `realtime:${topic}`,
            event: String(body.event),
            body: Buffer.from(String(body.bin), 'base64'),
            encoding: 'binary',
          }
        : {
            topic: `realtime:${topic}`,
            event: String(body.event),
            body: JSON.stringify(body.payload ?? {}),
            encoding: 'json',
          };
      // A broadcast from SQL carries its realtime.messages id, sent as meta.id as Supabase does.
      if (typeof body.id === 'string') b.meta = { id: body.id };
      this.deliverBroadcast(key, b, null);
    } else if (body.k === 'p') {
      this.deliverPresence(String(body.topic), {
        joins: (body.joins ?? {}) as Metas,
        leaves: (body.leaves ?? {}) as Metas,
      });
    } else if (body.k === 'c') {
      // Parsed again when it holds numbers a JS number would round (bigint, long numeric).
      const exact = parseExact(text);
      this.onChange((exact ? { ...exact, exact: true } : body) as unknown as Change);
    }
  }

  // ---- database changes

  /** Checks run side by side; deliveries keep the changes' order. */
  private onChange(c: Change): void {
    if (!this.changeChannels.size) return;
    if (this.pending >= MAX_PENDING_CHANGES) {
      for (const ch of this.changeChannels)
        ch.systemMessage(
          'postgres_changes',
          'error',
          `A change to ${c.schema}.${c.table} was not delivered: more than ${MAX_PENDING_CHANGES} changes are waiting for their RLS check.`,
        );
      return;
    }
    this.pending++;
    const work = this.prepare(c).catch((err) => {
      this.p.log.error({ err, table: `${c.schema}.${c.table}` }, 'realtime: a change could not be checked');
      return () => {
        for (const ch of this.changeChannels)
          ch.systemMessage(
            'postgres_changes',
            'error',
            `A change to ${c.schema}.${c.table} could not be checked against RLS and was not delivered.`,
          );
      };
    });
    this.ordered = this.ordered
      .then(() => work)
      .then((deliver) => {
        this.pending--;
        deliver?.();
      });
  }

  /** Who receives the change (one RLS query for all subscribers that need it), as a function that sends it. */
  private async prepare(c: Change): Promise<(() => void) | null> {
    // (Filters need the table's key and replica identity; tables nobody watches are not looked up.)
    if (![...this.changeChannels].some((ch) => ch.bindings.some((b) => bindingCovers(b, c)))) return null;
    const rel = await this.relations.byId(c.relid, c.record ?? c.old_record);
    if (!rel) return null;
    // Each binding's filter on the row; pattern conditions (like, match, ...) are then asked of PostgreSQL, all in one query.
    const candidates: { ch: Subscriber; b: Binding; tests: PatternTest[] }[] = [];
    for (const ch of this.changeChannels)
      for (const b of ch.bindings) {
        const tests = bindingMatches(b, c, rel);
        if (tests) candidates.push({ ch, b, tests });
      }
    const tests = candidates.flatMap((x) => x.tests);
    if (tests.length) {
      const passed = await runPatternTests(this.sql, tests);
      let i = 0;
      for (const x of candidates) x.tests = x.tests.filter(() => !passed[i++]);
    }
    const targets: { ch: Subscriber; bindings: Binding[] }[] = [];
    for (const x of candidates) {
      if (x.tests.length) continue;
      const last = targets[targets.length - 1];
      if (last?.ch === x.ch) last.bindings.push(x.b);
      else targets.push({ ch: x.ch, bindings: [x.b] });
    }
    if (!targets.length) return null;
    const allowed = targets.filter((t) => rel.selectable[t.ch.caller.role]);
    const needCheck = c.type !== 'DELETE' && rel.rls;
    const checked = needCheck ? allowed.filter((t) => t.ch.caller.role !== 'service_role') : [];
    const visible = new Set(allowed.filter((t) => !checked.includes(t)));
    if (checked.length && rel.visibleSql) {
      const claims = [...new Set(checked.map((t) => t.ch.claimsJson))];
      const pk: Record<string, unknown> = {};
      for (const k of rel.primaryKey) pk[k] = c.record?.[k];
      // (JSON text cast in SQL: postgres.js would encode a string parameter typed jsonb once more.)
      const [row] = await this.sql.unsafe('select realtime.visible_to($1, $2::text::jsonb, $3::text::jsonb) as v', [
        rel.visibleSql,
        c.exact ? restoreNumbers(JSON.stringify(pk)) : JSON.stringify(pk),
        `[${claims.join(',')}]`,
      ]);
      const ok = new Set((row!.v as number[]).map((i) => claims[i - 1]));
      for (const t of checked) if (ok.has(t.ch.claimsJson)) visible.add(t);
    }
    if (!visible.size) return null;
    // One payload per distinct `select` (null: the whole row); a channel gets one message per selection its bindings make.
    const payloads = new Map<string, string>();
    const payload = (select: string[] | null) => {
      const key = select ? select.join(',') : '';
      let data = payloads.get(key);
      if (data === undefined) {
        const json = changeJson(c, rel, select);
        data = c.exact ? restoreNumbers(json) : json;
        payloads.set(key, data);
      }
      return data;
    };
    const messages: { ch: Subscriber; json: string }[] = [];
    for (const t of visible) {
      const bySelect = new Map<string, Binding[]>();
      for (const b of t.bindings) {
        const key = b.select ? b.select.join(',') : '';
        bySelect.set(key, [...(bySelect.get(key) ?? []), b]);
      }
      for (const group of bySelect.values())
        messages.push({
          ch: t.ch,
          json: `{"ids":${JSON.stringify(group.map((b) => b.id))},"data":${payload(group[0]!.select)}}`,
        });
    }
    return () => {
      for (const m of messages) m.ch.pushRaw('postgres_changes', m.json);
    };
  }

  /** The project is gone or changed: its channels are told (realtime-js rejoins on phx_error) and the relay closed. */
  async close(): Promise<void> {
    this.closed = true;
    for (const set of this.topics.values())
      for (const ch of [...set]) ch.fail('The project was changed or removed; rejoin.');
    if (this.idleTimer) clearTimeout(this.idleTimer);
    if (this.timer) clearInterval(this.timer);
    const l = this.listener;
    this.listener = null;
    await l?.then((stop) => stop()).catch(() => {});
  }
}

export function topicKeyOf(subTopic: string, isPrivate: boolean): string {
  return (isPrivate ? 'p:' : 'o:') + subTopic;
}

/** Deletes relayed broadcasts and large bodies past their retention. */
export async function pruneRelayed(sql: Sql): Promise<void> {
  const secs = hubTimers.relayRetentionMs / 1000;
  await sql`delete from realtime.messages where inserted_at < localtimestamp - make_interval(secs => ${secs})`;
  await sql`delete from realtime.relay where created_at < now() - make_interval(secs => ${secs})`;
}
