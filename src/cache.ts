/**
 * The one cache Hearth keeps in memory: least-recently-used entries past `max`
 * go first, so no cache grows without bound whatever keys clients send, and
 * entries with a lifetime expire by the injected clock, so tests move time
 * instead of sleeping (lru-cache with the clock as its time source).
 */
import { LRUCache } from 'lru-cache';
import { systemClock, type Clock } from './context.ts';

export type Cache<K extends {}, V extends {}> = LRUCache<K, V>;

export interface CacheOptions<K, V> {
  /** Entries kept at most; past it the least recently used is evicted. */
  max: number;
  /** How long an entry lives after it is set (`set(k, v, { ttl })` overrides it per entry); none: until evicted. */
  ttlMs?: number;
  /** The time source of the lifetimes (Platform.clock). */
  clock?: Clock;
  /** Called when an entry leaves: evicted, deleted, expired or replaced. */
  dispose?: (value: V, key: K) => void;
}

export function newCache<K extends {}, V extends {}>({
  max,
  ttlMs,
  clock = systemClock,
  dispose,
}: CacheOptions<K, V>): Cache<K, V> {
  return new LRUCache<K, V>({
    // Counted by size, one per entry, rather than by `max`: lru-cache allocates
    // its bookkeeping arrays at `max` entries up front (~300 KB for 10,000 with
    // lifetimes), which an idle server held for nearly empty caches (~1 MB in
    // all); counted by size they grow with the entries.
    maxSize: max,
    sizeCalculation: () => 1,
    ttl: ttlMs,
    // Read the clock on every check: lru-cache otherwise reuses one reading for a millisecond by timer.
    ttlResolution: 0,
    perf: { now: () => clock.now().getTime() },
    dispose: dispose && ((value, key) => dispose(value, key)),
  });
}

/**
 * The cached promise for `key`, or `load()`'s, cached at once so concurrent
 * callers share one load. A load that fails is dropped, so the next call
 * tries again. `load` is handed the expired entry, if any, to revalidate
 * rather than read everything again.
 */
export function cachedLoad<K extends {}, V>(
  cache: Cache<K, Promise<V>>,
  key: K,
  load: (expired?: Promise<V>) => Promise<V>,
): Promise<V> {
  const hit = cache.get(key, { noDeleteOnStaleGet: true });
  if (hit) return hit;
  const value = load(cache.peek(key, { allowStale: true }));
  cache.set(key, value);
  value.catch(() => {
    if (cache.peek(key) === value) cache.delete(key);
  });
  return value;
}
