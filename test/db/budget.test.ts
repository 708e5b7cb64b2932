// The connection budget (src/db/budget.ts) on real connections: a connect
// past the bound fails with CONNECTIONS_EXHAUSTED (503 database_unavailable),
// and a waiter gets the slot of another database's idle connection, which is
// closed for it, while a connection that may hold session state is not.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import postgres from 'postgres';
import { ConnectionBudget } from '../../src/db/budget.ts';
import { isDatabaseUnavailable } from '../../src/db/unavailable.ts';
import { serverUrl } from '../helpers/hearth.ts';

/** A one-connection pool through the budget, as db/pools.ts makes them (`socket` is not in postgres.js's types). */
function pool(budget: ConnectionBudget, key: string, evictable: boolean): postgres.Sql {
  const options = { max: 1, onnotice: () => {}, socket: budget.socket(key, { evictable }) };
  return postgres(serverUrl(), options);
}

test('past the queue bound a connect fails with CONNECTIONS_EXHAUSTED, a database_unavailable error', async () => {
  const budget = new ConnectionBudget(1, 200);
  const a = pool(budget, 'a', false);
  const b = pool(budget, 'b', false);
  try {
    const held = await a.reserve(); // holds the only slot
    const started = Date.now();
    const err = await b`select 1`.then(
      () => null,
      (e: unknown) => e,
    );
    assert.equal((err as { code?: string }).code, 'CONNECTIONS_EXHAUSTED');
    assert.ok(Date.now() - started >= 200, 'it waited for the bound first');
    assert.ok(isDatabaseUnavailable(err));
    held.release();
    await a.end(); // its connection gives the slot back
    assert.deepEqual([...(await b`select 2 as n`)], [{ n: 2 }], 'served once a slot is free');
  } finally {
    await Promise.all([a.end(), b.end()]);
  }
});

test("a waiter gets the slot of another database's idle connection, closed for it; a connection that may hold session state is kept", async () => {
  const budget = new ConnectionBudget(1, 2000);
  const idle = pool(budget, 'idle', true);
  const waiter = pool(budget, 'waiter', false);
  try {
    assert.equal(budget.heldBy('idle'), 0);
    await idle`select 1`; // connected, then idle in its pool
    assert.equal(budget.heldBy('idle'), 1);
    assert.deepEqual([...(await waiter`select 2 as n`)], [{ n: 2 }]);
    assert.equal(budget.heldBy('idle'), 0, 'the idle connection was closed');
    assert.equal(budget.inUse, 1);
    // The waiter's connection may not be closed: the idle pool now waits past its bound.
    const stuck = new ConnectionBudget(1, 300);
    const keeps = pool(stuck, 'keeps', false);
    const other = pool(stuck, 'other', true);
    try {
      await keeps`select 1`;
      const err = await other`select 1`.then(
        () => null,
        (e: unknown) => e,
      );
      assert.equal((err as { code?: string }).code, 'CONNECTIONS_EXHAUSTED');
      assert.equal(stuck.heldBy('keeps'), 1);
    } finally {
      await Promise.all([keeps.end(), other.end()]);
    }
  } finally {
    await Promise.all([idle.end(), waiter.end()]);
  }
});
