// src/cache.ts: the LRU cache every in-memory cache uses, its lifetimes read
// from the injected clock.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cachedLoad, newCache } from '../src/cache.ts';
import { TestClock } from './helpers/hearth.ts';

test('an entry lives ttlMs by the injected clock, however little real time passes', () => {
  const clock = new TestClock();
  const cache = newCache<string, number>({ max: 10, ttlMs: 30_000, clock });
  cache.set('a', 1);
  clock.advance(29_000);
  assert.equal(cache.get('a'), 1);
  clock.advance(2_000);
  assert.equal(cache.get('a'), undefined);
  assert.equal(cache.size, 0);
});

test('a per-entry lifetime overrides the cache default, and no default means no expiry', () => {
  const clock = new TestClock();
  const cache = newCache<string, number>({ max: 10, clock });
  cache.set('forever', 1);
  cache.set('brief', 2, { ttl: 1000 });
  clock.advance(3600_000);
  assert.equal(cache.get('forever'), 1);
  assert.equal(cache.get('brief'), undefined);
});

test('past max the least recently used entry leaves, and dispose hears of it', () => {
  const gone: string[] = [];
  const cache = newCache<string, number>({ max: 3, dispose: (_, key) => gone.push(key) });
  for (const [i, k] of ['a', 'b', 'c'].entries()) cache.set(k, i);
  cache.get('a'); // a is now the most recently used: b is the oldest
  cache.set('d', 3);
  assert.equal(cache.size, 3);
  assert.deepEqual([...cache.keys()].sort(), ['a', 'c', 'd']);
  assert.deepEqual(gone, ['b']);
  for (let i = 0; i < 1000; i++) cache.set(`k${i}`, i);
  assert.equal(cache.size, 3);
});

test('cachedLoad: concurrent callers share one load; a failed load is not kept', async () => {
  const cache = newCache<string, Promise<number>>({ max: 10 });
  let loads = 0;
  const load = async () => ++loads;
  const [x, y] = await Promise.all([cachedLoad(cache, 'k', load), cachedLoad(cache, 'k', load)]);
  assert.deepEqual([x, y, loads], [1, 1, 1]);

  await assert.rejects(
    cachedLoad(cache, 'bad', () => Promise.reject(new Error('down'))),
    /down/,
  );
  await new Promise((r) => setImmediate(r));
  assert.equal(cache.has('bad'), false);
  assert.equal(await cachedLoad(cache, 'bad', async () => 7), 7);
});

test('cachedLoad hands the load the expired entry, to revalidate rather than read everything again', async () => {
  const clock = new TestClock();
  const cache = newCache<string, Promise<string>>({ max: 10, ttlMs: 5000, clock });
  assert.equal(
    await cachedLoad(cache, 'f', async (expired) => `v1 (expired: ${expired === undefined ? 'none' : await expired})`),
    'v1 (expired: none)',
  );
  clock.advance(6000);
  assert.equal(
    await cachedLoad(cache, 'f', async (expired) => `v2 after ${await expired}`),
    'v2 after v1 (expired: none)',
  );
});
