// How database errors reach the client, as PostgREST 12 answers them: SQLSTATE
// to HTTP status, database detail for the secret key only (SPEC 7), RAISE
// SQLSTATE 'PGRST' choosing the body, status and headers, and the 401
// challenge of a permission denial.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createProject, OWNER, type Project } from './fixture.ts';

let p: Project;
before(async () => {
  p = await createProject();
  await p.admin.unsafe(`set role ${OWNER};
    create function raise_with(state text) returns int language plpgsql as $$ begin raise exception using errcode = state, message = 'raised ' || state, detail = 'raise detail'; end $$;
    create function pay_up() returns int language plpgsql as $$ begin
      raise sqlstate 'PGRST' using
        message = '{"code":"123","message":"Payment Required","details":"Quota exceeded","hint":"Upgrade your plan"}',
        detail = '{"status":402,"headers":{"X-Powered-By":"Nerd Rage"}}';
    end $$;
    create function pgrst_no_detail() returns int language plpgsql as $$ begin raise sqlstate 'PGRST' using message = '{"code":"1","message":"m"}'; end $$;
    create function pgrst_raise(msg text, det text) returns int language plpgsql as $$ begin raise sqlstate 'PGRST' using message = msg, detail = det; end $$;
    reset role`);
  await p.reload();
});
after(() => p.close());

const error = (res: { json: unknown }) =>
  res.json as { message: string; code: string; details: unknown; hint: unknown };

describe('SQLSTATE to HTTP status', () => {
  const cases: [string, number][] = [
    ['23502', 400],
    ['23503', 409],
    ['23505', 409],
    ['23514', 400],
    ['25006', 405],
    ['42P01', 404],
    ['42883', 404],
    ['53300', 503],
    ['53400', 500],
    ['57014', 500],
    ['P0001', 400],
    ['P0002', 500],
    ['PT418', 418],
    ['PT4XX', 500],
    ['57P01', 503],
    // Only pg-safeupdate's "... requires a WHERE clause" is the client's fault.
    ['21000', 500],
    ['22023', 400],
  ];
  for (const [state, status] of cases) {
    test(`${state} answers ${status}`, async () => {
      const res = await p.call('service', 'POST', 'rpc/raise_with', { body: { state } });
      assert.deepEqual([res.status, error(res).code, error(res).message], [status, state, `raised ${state}`]);
    });
  }
});

describe('database detail (SPEC 7)', () => {
  // Each write breaks one constraint; anon and a user get the code, the status and a generic text.
  const cases: [string, string, string, unknown, number, string][] = [
    ['not-null', 'POST', 'users', { id: '00000000-0000-4000-8000-0000000000c1' }, 400, '23502'],
    ['foreign key', 'POST', 'comments', { post_id: 999, body: 'x' }, 409, '23503'],
    ['unique', 'POST', 'tags', { name: 'intro' }, 409, '23505'],
    ['bad value', 'POST', 'tags', { id: 'abc', name: 'n' }, 400, '22P02'],
  ];
  before(() =>
    p.admin.unsafe(
      `grant insert on all tables in schema public to anon, authenticated; grant usage on all sequences in schema public to anon, authenticated`,
    ),
  );
  for (const [what, method, path, body, status, code] of cases) {
    test(`${what}: ${status} ${code}; only the secret key sees what Postgres said`, async () => {
      const svc = await p.call('service', method, path, { body });
      assert.equal(svc.status, status);
      assert.match(error(svc).message, /violates|invalid input/);
      for (const who of ['anon', 'alice'] as const) {
        const res = await p.call(who, method, path, { body });
        assert.equal(res.status, status, `${who} ${res.body}`);
        const e = error(res);
        assert.equal(e.code, code);
        assert.deepEqual([e.details, e.hint], [null, null], who);
        // Generic text: nothing Postgres wrote (it quotes names and values).
        assert.notEqual(e.message, error(svc).message);
        assert.doesNotMatch(e.message, /"/, who);
      }
    });
  }
});

describe("RAISE SQLSTATE 'PGRST'", () => {
  test('MESSAGE is the body and DETAIL the status and headers, for every caller', async () => {
    for (const who of ['anon', 'alice', 'service'] as const) {
      const res = await p.call(who, 'POST', 'rpc/pay_up');
      assert.equal(res.status, 402, `${who} ${res.body}`);
      assert.equal(res.headers['x-powered-by'], 'Nerd Rage');
      assert.deepEqual(res.json, {
        message: 'Payment Required',
        code: '123',
        details: 'Quota exceeded',
        hint: 'Upgrade your plan',
      });
    }
  });

  const malformed: [string, string, string, string][] = [
    ['MESSAGE that is not JSON', 'not json', '{"status":400,"headers":{}}', 'MESSAGE'],
    ['MESSAGE without a code', '{"message":"m"}', '{"status":400,"headers":{}}', 'MESSAGE'],
    ['DETAIL that is not JSON', '{"code":"1","message":"m"}', 'nope', 'DETAIL'],
    [
      'MESSAGE with non-string details',
      '{"code":"1","message":"m","details":{"a":1}}',
      '{"status":400,"headers":{}}',
      'MESSAGE',
    ],
    ['DETAIL without a status', '{"code":"1","message":"m"}', '{"headers":{}}', 'DETAIL'],
    ['DETAIL without headers', '{"code":"1","message":"m"}', '{"status":400}', 'DETAIL'],
    ['DETAIL with a non-string header', '{"code":"1","message":"m"}', '{"status":400,"headers":{"X-A":1}}', 'DETAIL'],
  ];
  for (const [what, msg, det, part] of malformed) {
    test(`${what} is 500 PGRST121`, async () => {
      const res = await p.call('anon', 'POST', 'rpc/pgrst_raise', { body: { msg, det } });
      assert.equal(res.status, 500, res.body ?? '');
      assert.equal(error(res).code, 'PGRST121');
      assert.equal(error(res).message, `Could not parse JSON in the "RAISE SQLSTATE 'PGRST'" error`);
      assert.match(String(error(res).details), new RegExp(`^Invalid JSON value for ${part}`));
      assert.match(String(error(res).hint), new RegExp(`^${part} must be a JSON object`));
    });
  }

  test('a missing DETAIL is 500 PGRST121', async () => {
    const res = await p.call('anon', 'POST', 'rpc/pgrst_no_detail');
    assert.deepEqual(
      [res.status, error(res).code, error(res).details],
      [500, 'PGRST121', 'DETAIL is missing in the RAISE statement'],
    );
  });

  test('optional parts may be left out; a header the HTTP layer owns is not taken', async () => {
    const res = await p.call('anon', 'POST', 'rpc/pgrst_raise', {
      body: {
        msg: '{"code":"C1","message":"teapot"}',
        det: '{"status":418,"headers":{"Content-Length":"1","X-Trace":"t1"}}',
      },
    });
    assert.deepEqual([res.status, res.json], [418, { message: 'teapot', code: 'C1', details: null, hint: null }]);
    assert.equal(res.headers['x-trace'], 't1');
    assert.equal(res.headers['content-length'], undefined);
  });
});

describe('a permission denial', () => {
  test('is 401 with a Bearer challenge for anon, 403 without one for a user', async () => {
    const anon = await p.call('anon', 'GET', 'secrets');
    assert.deepEqual([anon.status, error(anon).code, anon.headers['www-authenticate']], [401, '42501', 'Bearer']);
    const user = await p.call('alice', 'GET', 'secrets');
    assert.deepEqual([user.status, error(user).code, user.headers['www-authenticate']], [403, '42501', undefined]);
  });
});
