/**
 * The data plane's view of projects: a per-process cache of each project's
 * row, pool, public keys, signing key and settings, dropped when a change is
 * announced (see changes.ts) or after a short TTL, so several Hearth
 * processes stay consistent through Postgres alone.
 */
import type { CryptoKey, KeyObject } from 'jose';
import { cachedLoad, newCache, type Cache } from '../cache.ts';
import type { Platform } from '../context.ts';
import type { Sql } from '../db/pools.ts';
import type { Change } from './changes.ts';
import { readSettings } from './project-config.ts';
import { findProject, defaultProject, type ProjectRow } from './projects.ts';
import { sha256 } from '../secrets.ts';
import type { Settings } from './settings-schema.ts';
import { importPrivateKey, importPublicKey, type PublicJwk } from './signing-keys.ts';

type Key = CryptoKey | KeyObject | Uint8Array;
const TTL_MS = 30_000;
/** Project runtimes kept at most (each holds a pool, closed when idle, and the REST schema cache). */
const MAX_RUNTIMES = 1000;

export class ProjectRuntime {
  readonly id: string;
  readonly ref: string;
  readonly dbName: string;
  readonly sql: Sql;
  /** The JWKS document, serialised once: it is served on every token verification by clients. */
  readonly jwksJson: string;
  private signer: Promise<{ kid: string; key: Key }> | null = null;
  private readonly settingsCache = newCache<string, Promise<Settings>>({ max: 32 });
  private readonly memo = new Map<string, { value: unknown; dispose?: () => unknown }>();

  constructor(
    private readonly p: Platform,
    readonly row: ProjectRow,
    readonly jwks: { keys: PublicJwk[] },
    readonly verifyKeys: Map<string, Key>,
    /** When the row and keys were last read or confirmed (the registry's TTL). */
    public loadedAt: number,
  ) {
    this.id = row.id;
    this.ref = row.ref;
    this.dbName = row.db_name;
    this.sql = p.dbs.project(row.db_name);
    this.jwksJson = JSON.stringify(jwks);
  }

  signingKey(): Promise<{ kid: string; key: Key }> {
    this.signer ??= (async () => {
      const [k] = await this.p.dbs.control`select kid, private_jwk_sealed from platform.signing_keys
        where project_id = ${this.id} order by created_at desc limit 1`;
      return { kid: k!.kid as string, key: await importPrivateKey(this.p.master, k!.private_jwk_sealed as string) };
    })();
    return this.signer;
  }

  settings(area: string): Promise<Settings> {
    return cachedLoad(this.settingsCache, area, () => readSettings(this.p.dbs.control, this.id, area));
  }

  forgetSettings(area?: string): void {
    if (area) this.settingsCache.delete(area);
    else this.settingsCache.clear();
  }

  /** A per-project value owned by another domain (e.g. the REST schema cache), built once. */
  cached<T>(name: string, make: () => T, dispose?: (value: T) => unknown): T {
    let entry = this.memo.get(name);
    if (!entry) {
      const value = make();
      entry = { value, dispose: dispose ? () => dispose(value) : undefined };
      this.memo.set(name, entry);
    }
    return entry.value as T;
  }

  dispose(): void {
    for (const e of this.memo.values()) void Promise.resolve(e.dispose?.()).catch(() => {});
    this.memo.clear();
  }
}

export interface ResolvedKey {
  projectId: string;
  type: 'publishable' | 'secret';
}

export class ProjectRegistry {
  /** Runtimes of the projects in use; one pushed out (the least recently used past MAX_RUNTIMES) is disposed. */
  private readonly byRef = newCache<string, Promise<ProjectRuntime | null>>({
    max: MAX_RUNTIMES,
    dispose: (entry) => void entry.then((rt) => rt?.dispose()).catch(() => {}),
  });
  /** API keys resolved, misses included, for TTL_MS. */
  private readonly keys: Cache<string, { key: ResolvedKey | null }>;
  /**
   * Bumped whenever keys are forgotten: a lookup that began before a revocation
   * (and may have read the revoked row) must not put its answer in the cache after it.
   */
  private keysGeneration = 0;
  private defaultRef: string | null = null;
  private readonly watchers = new Set<(change: Change) => void>();

  constructor(private readonly p: Platform) {
    this.keys = newCache({ max: 10_000, ttlMs: TTL_MS, clock: p.clock });
  }

  private now(): number {
    return this.p.clock.now().getTime();
  }

  async byReference(ref: string): Promise<ProjectRuntime | null> {
    let entry = this.byRef.get(ref);
    if (entry) {
      const rt = await entry;
      if (!rt || this.now() - rt.loadedAt < TTL_MS) return rt;
      // Past the TTL (the safety net for a missed announcement) the runtime is confirmed, not
      // rebuilt: a rebuild would throw away the REST schema cache, its read plans and its LISTEN
      // connection every 30 s under steady load. One request confirms; the others go on meanwhile.
      rt.loadedAt = this.now();
      if (await this.unchanged(rt).catch(() => false)) {
        rt.forgetSettings();
        return rt;
      }
      if (this.byRef.peek(ref) === entry) this.byRef.delete(ref);
    }
    entry = this.load(ref);
    this.byRef.set(ref, entry);
    const rt = await entry.catch((err) => {
      if (this.byRef.peek(ref) === entry) this.byRef.delete(ref);
      throw err;
    });
    if (!rt && this.byRef.peek(ref) === entry) this.byRef.delete(ref); // unknown refs are not cached: a project may be created any moment
    return rt;
  }

  async defaultProject(): Promise<ProjectRuntime | null> {
    if (!this.defaultRef) this.defaultRef = (await defaultProject(this.p.dbs.control))?.ref ?? null;
    return this.defaultRef ? this.byReference(this.defaultRef) : null;
  }

  /** Whether the project's row and signing keys are still what the runtime was built from. */
  private async unchanged(rt: ProjectRuntime): Promise<boolean> {
    const [row, kids] = await Promise.all([
      findProject(this.p.dbs.control, rt.ref),
      this.p.dbs.control`select kid from platform.signing_keys where project_id = ${rt.id} order by created_at`,
    ]);
    return (
      row !== undefined &&
      JSON.stringify(row) === JSON.stringify(rt.row) &&
      kids.map((k) => k.kid).join() === [...rt.verifyKeys.keys()].join()
    );
  }

  private async load(ref: string): Promise<ProjectRuntime | null> {
    const row = await findProject(this.p.dbs.control, ref);
    if (!row) return null;
    const rows = await this.p.dbs
      .control`select kid, public_jwk from platform.signing_keys where project_id = ${row.id} order by created_at`;
    const verifyKeys = new Map<string, Key>();
    const keys: PublicJwk[] = [];
    for (const r of rows) {
      keys.push(r.public_jwk as PublicJwk);
      verifyKeys.set(r.kid as string, await importPublicKey(r.public_jwk as PublicJwk));
    }
    return new ProjectRuntime(this.p, row, { keys }, verifyKeys, this.now());
  }

  /**
   * resolveKey's answer while it is cached (misses included), else undefined:
   * lets the data plane admit a request with a known key without a promise.
   * Keyed by the key itself (held only in this process's memory), so a hit costs no hashing.
   */
  knownKey(apiKey: string): ResolvedKey | null | undefined {
    const hit = this.keys.get(apiKey);
    return hit ? hit.key : undefined;
  }

  /** Which project and kind an API key is, or null. Cached briefly, misses included. */
  async resolveKey(apiKey: string): Promise<ResolvedKey | null> {
    const known = this.knownKey(apiKey);
    if (known !== undefined) return known;
    const generation = this.keysGeneration;
    const [row] = await this.p.dbs
      .control`select project_id, type from platform.api_keys where key_hash = ${sha256(apiKey)}`;
    const key = row ? { projectId: row.project_id as string, type: row.type as ResolvedKey['type'] } : null;
    if (generation === this.keysGeneration) this.keys.set(apiKey, { key });
    return key;
  }

  /**
   * Applies a change announced by any process. A deleted project or a
   * created, renamed or revoked key drops the project's runtime (what was
   * built from its keys, such as the keys its functions are given, is
   * rebuilt) and its resolved keys.
   */
  onChange(change: Change): void {
    const applied: Promise<unknown>[] = [];
    for (const [ref, entry] of this.byRef) {
      applied.push(
        entry.then((rt) => {
          if (rt?.id !== change.projectId) return;
          if (change.kind === 'config') rt.forgetSettings(change.area);
          else if (this.byRef.peek(ref) === entry) this.byRef.delete(ref);
        }),
      );
    }
    if (change.kind !== 'config') {
      this.keysGeneration++;
      for (const [apiKey, v] of this.keys) if (v.key?.projectId === change.projectId) this.keys.delete(apiKey);
    }
    void Promise.allSettled(applied).then(() => {
      for (const watcher of this.watchers) {
        try {
          watcher(change);
        } catch (err) {
          this.p.log.error({ err, change }, 'a project change watcher failed');
        }
      }
    });
  }

  /**
   * Calls `watcher` with every change, once this process has applied it (what
   * it reads through the registry then is current), e.g. to end what a
   * setting no longer allows. Returns the way to stop watching.
   */
  watch(watcher: (change: Change) => void): () => void {
    this.watchers.add(watcher);
    return () => void this.watchers.delete(watcher);
  }

  close(): void {
    this.byRef.clear();
  }
}
