/**
 * Every function the platform puts in a project database, with who may
 * execute it, is listed in docs/database-functions.md; this compares that
 * list with the catalog of a new project's database, so a function added
 * without a deliberate grant (functions are executable by PUBLIC unless
 * revoked) fails here until the list says who gets it and why.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import postgres from 'postgres';
import { serverUrl, startTestHearth, type TestHearth } from '../helpers/hearth.ts';

const DOC = new URL('../../docs/database-functions.md', import.meta.url);

let h: TestHearth;
let db: postgres.Sql;
before(async () => {
  h = await startTestHearth();
  const url = new URL(serverUrl());
  url.pathname = `/${h.hearth.project.db_name}`;
  db = postgres(url.toString(), { max: 1, onnotice: () => {} });
});
after(async () => {
  await db?.end();
  await h?.close();
});

/** Grantees in one order whatever the database's collation. */
const grantees = (names: string[]) => (names.length ? [...names].sort().join(', ') : '(nobody)');

/** `schema.name(args) | definer or invoker | grantees` for each platform function in the catalog. */
async function catalog(): Promise<string[]> {
  const owner = `hearth_${h.info.PROJECT_REF}_owner`;
  const rows = await db`
    select n.nspname || '.' || p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ')' as fn,
      case when p.prosecdef then 'definer' else 'invoker' end as security,
      array(select case when a.grantee = 0 then 'PUBLIC' when a.grantee = ${owner}::regrole then 'owner' else pg_get_userbyid(a.grantee) end
        from aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) a
        where a.privilege_type = 'EXECUTE' and a.grantee <> p.proowner) as execute
    from pg_proc p join pg_namespace n on n.oid = p.pronamespace
    where n.nspname not in ('pg_catalog', 'information_schema') and n.nspname not like 'pg_toast%'
      and p.proowner <> ${owner}::regrole
      and not exists (select from pg_depend d where d.classid = 'pg_proc'::regclass and d.objid = p.oid and d.deptype = 'e')`;
  return rows.map((r) => `${r.fn} | ${r.security} | ${grantees(r.execute as string[])}`).sort();
}

/** The same triples from the doc's tables: | `schema.fn(args)` | security | grantees | why |. */
function documented(): string[] {
  const out: string[] = [];
  for (const line of readFileSync(DOC, 'utf8').split('\n')) {
    const m = /^\| `([^`]+)` \| (definer|invoker) \| ([^|]+) \|/.exec(line);
    if (m)
      out.push(
        `${m[1]} | ${m[2]} | ${
          m[3]!.trim() === '(nobody)'
            ? '(nobody)'
            : grantees(
                m[3]!
                  .replaceAll('`', '')
                  .split(',')
                  .map((g) => g.trim()),
              )
        }`,
      );
  }
  return out.sort();
}

test('docs/database-functions.md lists exactly the platform functions of a project database and who may execute each', async () => {
  const actual = await catalog();
  assert.ok(actual.length > 40, `only ${actual.length} functions found`);
  assert.deepEqual(actual, documented());
});

test('no SECURITY DEFINER function is executable by PUBLIC, and anon/authenticated only where the list says a feature needs it', async () => {
  const definers = (await catalog()).filter((l) => l.includes(' | definer | '));
  assert.deepEqual(
    definers.filter((l) => /PUBLIC/.test(l.split(' | ')[2]!)),
    [],
  );
  const open = definers
    .filter((l) => /\b(anon|authenticated)\b/.test(l.split(' | ')[2]!))
    .map((l) => l.split(' | ')[0]);
  assert.deepEqual(open, ['storage.bucket_is_public(bucket text)']);
});

test("the API roles cannot call the platform's quota or trigger functions", async () => {
  for (const role of ['anon', 'authenticated']) {
    for (const fn of [
      'storage.usage_within_quota()',
      'storage.objects_after_insert()',
      'hearth_workflows.capture()',
      'pgmq._create(text, boolean)',
    ]) {
      const [row] = await db`select has_function_privilege(${role}, ${fn}, 'execute') as can`;
      assert.equal(row!.can, false, `${role} ${fn}`);
    }
  }
});

test('with storage exposed in config/api db_schema, anon reaches no quota function through /rest/v1/rpc', async () => {
  const exposed = await h.api('PATCH', `/v1/projects/${h.info.PROJECT_REF}/config/api`, {
    body: { db_schema: 'public,storage' },
  });
  assert.equal(exposed.status, 200);
  const rpc = (name: string, body: unknown) =>
    fetch(`${h.url}/rest/v1/rpc/${name}`, {
      method: 'POST',
      headers: { apikey: h.info.PUBLISHABLE_KEY, 'content-type': 'application/json', 'content-profile': 'storage' },
      body: JSON.stringify(body),
    });
  for (const [name, body] of [
    ['assert_quota', { quota: 0 }],
    ['usage_within_quota', {}],
  ] as const) {
    const res = await rpc(name, body);
    assert.equal(res.status, 404, name);
    assert.equal((await res.json()).code, 'PGRST202');
  }
  // The one definer the API roles keep (the public-read policy needs it) answers only about public buckets.
  const pub = await rpc('bucket_is_public', { bucket: 'nope' });
  assert.equal(pub.status, 200);
  assert.equal(await pub.json(), false);
});
