/**
 * The process's connection budget: every connection Hearth opens to
 * PostgreSQL (control, admin, each project's pool, REST schema listeners,
 * background passes) takes a slot first, so one process never holds more than
 * HEARTH_DB_MAX_CONNECTIONS however many projects are hit at once
 * (docs/configuration.md). It works below the driver, as postgres.js's
 * `socket` option: the driver asks for a socket when it (re)connects, and the
 * slot is given back when that socket closes.
 *
 * Fair between databases: a free slot goes to the platform's own pools
 * first (control, admin: every request needs them briefly), then to the
 * waiting database holding the fewest connections (a cold project's first
 * connection before a busy project's tenth). While anyone waits, the
 * connection idle the longest in the database holding the most is closed to
 * make room, if it may be (pools.ts says which); idle means its last message
 * from the server was ReadyForQuery "idle", with nothing written since, for
 * at least IDLE_MS. A project's pool is also capped at a quarter of the
 * budget (pools.ts). A connect waits for a slot at most queueMs, then fails
 * with CONNECTIONS_EXHAUSTED: 503 database_unavailable with Retry-After
 * (unavailable.ts).
 */
import net from 'node:net';

/** An idle connection younger than this is left alone: its pool may be about to hand it a query. */
const IDLE_MS = 100;

/** ReadyForQuery with transaction status "idle": 'Z', length 5, 'I'. */
const READY_IDLE = Buffer.from([0x5a, 0, 0, 0, 5, 0x49]);

interface Slot {
  key: string;
  socket: net.Socket;
  /** May be closed while idle to make room (pools.ts says which connections). */
  evictable: boolean;
  /** When the connection last went idle, or null while it has work in flight. */
  idleSince: number | null;
}

interface Waiter {
  key: string;
  /** The platform's own connections (control, admin) go before any project's: every request needs them briefly. */
  first: boolean;
  grant: () => void;
  timer: NodeJS.Timeout;
}

/** The parsed options postgres.js hands to its `socket` option (only what is needed here). */
interface DriverOptions {
  host: string[];
  port: number[];
  path?: string | false;
}

export type SocketOption = ((options: DriverOptions) => Promise<net.Socket>) & { withoutWaiting?: SocketOption };

/** The `socket` option of a pool, failing at once rather than queueing when the budget is full (for a pool without a budget: as is). */
export function withoutWaiting<T>(socket: T): T {
  return ((socket as SocketOption | undefined)?.withoutWaiting as T | undefined) ?? socket;
}

export class BudgetExhausted extends Error {
  readonly code = 'CONNECTIONS_EXHAUSTED';
}

/**
 * A connect gave up waiting for this process's own budget: the work that
 * needed it never reached the database, so it may be tried again as if it
 * had not been (a workflow attempt is not spent, a cron fire is retried).
 */
export function isBudgetExhausted(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === 'CONNECTIONS_EXHAUSTED';
}

export class ConnectionBudget {
  private readonly slots = new Set<Slot>();
  private readonly held = new Map<string, number>();
  private waiters: Waiter[] = [];
  /** Slots granted, whether or not their socket is open yet. */
  private used = 0;

  constructor(
    public max: number,
    readonly queueMs: number,
  ) {}

  /** Connections open or opening now. */
  get inUse(): number {
    return this.used;
  }

  heldBy(key: string): number {
    return this.held.get(key) ?? 0;
  }

  /**
   * postgres.js's `socket` option for connections to one database (the key).
   * Its `withoutWaiting` variant fails at once, instead of queueing, when no
   * slot is free: for connections that are nice to have (a schema listener).
   */
  socket(key: string, kind: { evictable?: boolean; first?: boolean }, wait = true): SocketOption {
    const open: SocketOption = async (options) => {
      try {
        await (wait ? this.acquire(key, kind.first ?? false) : this.acquireNow(key));
      } catch (err) {
        // The driver has no way to take a rejected socket promise (its connection would stay
        // "connecting" for good), so it gets a socket that fails: the connect fails as any other.
        const failed = new net.Socket();
        setImmediate(() => failed.destroy(err as Error));
        return failed;
      }
      let socket: net.Socket;
      try {
        socket = options.path ? net.connect(options.path) : net.connect(options.port[0]!, options.host[0]!);
      } catch (err) {
        this.release(key);
        throw err;
      }
      this.track(key, socket, kind.evictable ?? false);
      return socket;
    };
    if (wait) open.withoutWaiting = this.socket(key, kind, false);
    return open;
  }

  private acquireNow(key: string): Promise<void> {
    if (this.used >= this.max || this.waiters.length)
      return Promise.reject(
        new BudgetExhausted(
          `all ${this.max} database connections of this process are in use (HEARTH_DB_MAX_CONNECTIONS)`,
        ),
      );
    this.take(key);
    return Promise.resolve();
  }

  private take(key: string): void {
    this.used++;
    this.held.set(key, this.heldBy(key) + 1);
  }

  private release(key: string): void {
    this.used--;
    const n = this.heldBy(key) - 1;
    if (n > 0) this.held.set(key, n);
    else this.held.delete(key);
    this.grantNext();
  }

  private acquire(key: string, first: boolean): Promise<void> {
    if (this.used < this.max && !this.waiters.length) {
      this.take(key);
      return Promise.resolve();
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        key,
        first,
        grant: () => {
          clearTimeout(waiter.timer);
          this.take(key);
          resolve();
        },
        timer: setTimeout(() => {
          this.waiters = this.waiters.filter((w) => w !== waiter);
          reject(
            new BudgetExhausted(
              `all ${this.max} database connections of this process stayed busy for ${this.queueMs} ms (HEARTH_DB_MAX_CONNECTIONS)`,
            ),
          );
        }, this.queueMs),
      };
      this.waiters.push(waiter);
      this.reclaim();
    });
  }

  private track(key: string, socket: net.Socket, evictable: boolean): void {
    const slot: Slot = { key, socket, evictable, idleSince: null };
    this.slots.add(slot);
    const write = socket.write;
    socket.write = function (this: net.Socket, ...args: unknown[]) {
      slot.idleSince = null;
      return (write as (...a: unknown[]) => boolean).apply(this, args);
    } as typeof socket.write;
    if (evictable)
      socket.on('data', (chunk: Buffer) => {
        if (chunk.length >= READY_IDLE.length && chunk.subarray(chunk.length - READY_IDLE.length).equals(READY_IDLE)) {
          slot.idleSince = Date.now();
          if (this.waiters.length) setTimeout(() => this.reclaim(), IDLE_MS + 1).unref();
        }
      });
    socket.once('close', () => {
      this.slots.delete(slot);
      this.release(key);
    });
  }

  /** Free slots go to the platform's waiters, then to those whose database holds the fewest connections (the earliest among equals). */
  private grantNext(): void {
    const before = (a: Waiter, b: Waiter) => (a.first !== b.first ? a.first : this.heldBy(a.key) < this.heldBy(b.key));
    while (this.waiters.length && this.used < this.max) {
      let best = 0;
      for (let i = 1; i < this.waiters.length; i++) {
        if (before(this.waiters[i]!, this.waiters[best]!)) best = i;
      }
      this.waiters.splice(best, 1)[0]!.grant();
    }
    this.reclaim();
  }

  /** While someone waits and nothing is free: closes the connection idle the longest in the database holding the most. */
  private reclaim(): void {
    if (!this.waiters.length || this.used < this.max) return;
    const now = Date.now();
    let victim: Slot | null = null;
    for (const slot of this.slots) {
      if (!slot.evictable || slot.idleSince === null || now - slot.idleSince < IDLE_MS || slot.socket.destroyed)
        continue;
      const more = victim ? this.heldBy(slot.key) - this.heldBy(victim.key) : 1;
      if (more > 0 || (more === 0 && slot.idleSince < victim!.idleSince!)) victim = slot;
    }
    if (victim) {
      victim.idleSince = null;
      victim.socket.destroy(); // its 'close' frees the slot for a waiter
    } else if (!this.retry && [...this.slots].some((slot) => slot.evictable && slot.idleSince !== null)) {
      // Idle, but not for long enough yet: look again once it has been.
      this.retry = setTimeout(() => {
        this.retry = null;
        this.reclaim();
      }, IDLE_MS);
      this.retry.unref();
    }
  }

  private retry: NodeJS.Timeout | null = null;
}
