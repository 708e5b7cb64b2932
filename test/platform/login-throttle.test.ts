/**
 * POST /v1/login under its sign-in throttle (src/platform/login-throttle.ts):
 * requests come from distinct loopback addresses (127.0.0.x, bound with
 * localAddress), so each client address is a real one, not a header.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { LOGIN_PER_ACCOUNT, LOGIN_PER_ADDRESS, REFILL_MS } from '../../src/platform/login-throttle.ts';
import { startTestHearth, type TestHearth } from '../helpers/hearth.ts';

let h: TestHearth;
before(async () => {
  // X-Forwarded-For counts from 127.0.0.1 only; the other loopback addresses are clients themselves.
  h = await startTestHearth({ env: { HEARTH_TRUSTED_PROXIES: '127.0.0.1' } });
});
after(async () => {
  await h?.close();
});

interface Answer {
  status: number;
  code: string | undefined;
  retryAfter: string | undefined;
}

function login(from: string, email: string, password: string, forwardedFor?: string): Promise<Answer> {
  const body = JSON.stringify({ email, password });
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${h.url}/v1/login`,
      {
        method: 'POST',
        localAddress: from,
        agent: false,
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () =>
          resolve({
            status: res.statusCode!,
            code: JSON.parse(text).error?.code,
            retryAfter: res.headers['retry-after'],
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const owner = () => h.hearth.owner;
const count = (answers: Answer[], status: number) => answers.filter((a) => a.status === status).length;

describe('/v1/login throttle', () => {
  test('a burst of 100 wrong passwords for one account: 5 are checked (401 unauthorized), 95 answered 429 with Retry-After; the owner still signs in from another address', async () => {
    const burst = await Promise.all(
      Array.from({ length: 100 }, () => login('127.0.0.2', owner().email, 'wrong-password!!')),
    );
    assert.equal(count(burst, 401), LOGIN_PER_ACCOUNT);
    assert.equal(count(burst, 429), 100 - LOGIN_PER_ACCOUNT);
    for (const a of burst.filter((x) => x.status === 429)) {
      assert.equal(a.code, 'over_request_rate_limit');
      const seconds = Number(a.retryAfter);
      assert.ok(
        Number.isInteger(seconds) && seconds >= 1 && seconds <= REFILL_MS / LOGIN_PER_ACCOUNT / 1000,
        `Retry-After ${a.retryAfter}`,
      );
    }
    for (const a of burst.filter((x) => x.status === 401)) assert.equal(a.retryAfter, undefined);
    // The attacker's address cannot even try the right password now...
    assert.equal((await login('127.0.0.2', owner().email, owner().password!)).status, 429);
    // ...but the owner, elsewhere, signs in, and a typo there is an ordinary 401.
    assert.equal((await login('127.0.0.3', owner().email, 'typo-password!!')).status, 401);
    assert.equal((await login('127.0.0.3', owner().email, owner().password!)).status, 200);
    // The allowance refills: one account attempt per REFILL_MS / LOGIN_PER_ACCOUNT.
    h.clock.advance(REFILL_MS / LOGIN_PER_ACCOUNT);
    assert.equal((await login('127.0.0.2', owner().email, owner().password!)).status, 200);
  });

  test(`one address guessing across many accounts is stopped after ${LOGIN_PER_ADDRESS} attempts; the same e-mail in another case is the same account`, async () => {
    const answers: Answer[] = [];
    for (let i = 0; i < LOGIN_PER_ADDRESS + 5; i++)
      answers.push(await login('127.0.0.4', `nobody${i}@example.com`, 'wrong-password!!'));
    assert.deepEqual(
      answers.map((a) => a.status),
      [...Array(LOGIN_PER_ADDRESS).fill(401), ...Array(5).fill(429)],
    );
    assert.ok(Number(answers.at(-1)!.retryAfter) >= 1);
    assert.equal((await login('127.0.0.4', owner().email, owner().password!)).status, 429);
    assert.equal((await login('127.0.0.5', owner().email, owner().password!)).status, 200);
    // Per account: upper-casing the address does not buy more attempts.
    const mixed: number[] = [];
    for (let i = 0; i <= LOGIN_PER_ACCOUNT; i++)
      mixed.push(
        (await login('127.0.0.6', i % 2 ? 'Someone@Example.com' : 'someone@example.com', 'wrong-password!!')).status,
      );
    assert.deepEqual(mixed, [...Array(LOGIN_PER_ACCOUNT).fill(401), 429]);
  });

  test('an IPv6 client counts as its /64: hopping between its addresses buys no more attempts', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < LOGIN_PER_ADDRESS; i++) {
      statuses.push(
        (await login('127.0.0.1', `six${i}@example.com`, 'wrong-password!!', `2001:db8:1:2::${(i + 1).toString(16)}`))
          .status,
      );
    }
    assert.deepEqual(statuses, Array(LOGIN_PER_ADDRESS).fill(401));
    assert.equal(
      (await login('127.0.0.1', 'six@example.com', 'wrong-password!!', '2001:db8:1:2:ffff:ffff:ffff:ffff')).status,
      429,
    );
    assert.equal((await login('127.0.0.1', 'six@example.com', 'wrong-password!!', '2001:db8:1:3::1')).status, 401);
  });

  test('right passwords are never throttled: each success gives its tokens back', async () => {
    for (let i = 0; i <= LOGIN_PER_ADDRESS; i++) {
      assert.equal((await login('127.0.0.7', owner().email, owner().password!)).status, 200, `sign-in ${i + 1}`);
    }
  });
});
