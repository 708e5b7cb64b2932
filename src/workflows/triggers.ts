/**
 * Trigger bindings (SPEC 2.12, 2.13, 4.6).
 *
 * Queue binding: each message of the bound pgmq queue starts a run with the
 * message body as input and `queue:<queue>:<generation>:<msg_id>` as
 * idempotency key (the generation is the queue table's OID, new whenever the
 * queue is re-created, since msg ids then restart at 1); the message is
 * deleted only after the run is committed, so delivery is at-least-once under
 * the visibility timeout and a redelivery finds the same run. A message that cannot start a run is left to reappear after the
 * visibility timeout and archived at its MAX_READS-th read.
 *
 * Row binding: installs the capture trigger of migrations/project/050 on the
 * table; matching changes are drained into runs keyed by
 * `row:<binding id>:<change id>`, deleted after the run is committed. A
 * change drained while its workflow is disabled is dropped (logged once);
 * one that cannot start a run otherwise is retried MAX_READS times.
 *
 * Neither drain runs for a project whose workflows are off.
 */
import type { Platform } from '../context.ts';
import { fail, HearthError } from '../errors.ts';
import { projectsWithSettingOn } from '../platform/project-config.ts';
import type { ProjectRow } from '../platform/projects.ts';
import type { ProjectRegistry } from '../platform/registry.ts';
import { archiveMessage, deleteMessage, isValidQueueName, queueExists, readMessages } from '../queues/index.ts';
import { checkWorkflowName } from './definitions.ts';
import { RETENTION_MS } from './engine.ts';
import { startRun } from './runs.ts';
import { unstorableJson } from '../platform/text.ts';
import { truncate } from './steps/index.ts';
import { quoteIdent, quoteLiteral as literal } from '../db/ident.ts';

export const QUEUE_VT_SECONDS = 30;
export const QUEUE_BATCH = 10;
export const MAX_READS = 5;
export const ROW_BATCH = 50;
export const FILTER_KEYS = 16;
export const FILTER_BYTES = 4096;
const EVENTS = ['insert', 'update', 'delete'] as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const IDENT = /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/;
/** insufficient_privilege (system catalogs), wrong_object_type, feature_not_supported. */
const UNBINDABLE = new Set(['42501', '42809', '0A000']);

async function requireWorkflow(p: Platform, projectId: string, workflow: unknown): Promise<string> {
  if (workflow === undefined || workflow === null)
    throw fail('invalid_workflow', 'workflow is required: the name of the workflow each change or message starts.');
  const name = checkWorkflowName(workflow, 'invalid_workflow');
  const [row] = await p.dbs
    .control`select 1 from platform.workflow_definitions where project_id = ${projectId} and name = ${name} limit 1`;
  if (!row) throw fail('not_found', `There is no workflow "${name}" in this project.`);
  return name;
}

const queueJson = (r: Record<string, unknown>) => ({
  id: r.id,
  queue: r.queue,
  workflow: r.workflow,
  enabled: r.enabled,
  created_at: r.created_at,
});

export async function listQueueTriggers(p: Platform, projectId: string) {
  const rows = await p.dbs
    .control`select * from platform.workflow_queue_triggers where project_id = ${projectId} order by created_at`;
  return rows.map(queueJson);
}

export async function createQueueTrigger(
  p: Platform,
  registry: ProjectRegistry,
  project: ProjectRow,
  body: Record<string, unknown>,
) {
  const queue = body.queue;
  if (!isValidQueueName(queue)) throw fail('invalid_queue');
  if (queue.startsWith('service_'))
    throw fail('invalid_queue', 'Queue names beginning with "service_" are reserved and cannot be bound.');
  const workflow = await requireWorkflow(p, project.id, body.workflow);
  const runtime = await registry.byReference(project.ref);
  if (!runtime || !(await queueExists(runtime.sql, queue))) {
    throw fail(
      'invalid_queue',
      `Queue "${queue}" does not exist; create it first with select pgmq.create('${queue}');`,
    );
  }
  const [row] = await p.dbs.control`insert into platform.workflow_queue_triggers (project_id, queue, workflow)
    values (${project.id}, ${queue}, ${workflow}) on conflict (project_id, queue) do nothing returning *`;
  if (!row)
    throw fail('queue_bound', `Queue "${queue}" is already bound to a workflow; a queue feeds one workflow only.`);
  return queueJson(row);
}

export async function deleteQueueTrigger(p: Platform, projectId: string, id: string): Promise<void> {
  const rows = UUID.test(id)
    ? await p.dbs
        .control`delete from platform.workflow_queue_triggers where id = ${id} and project_id = ${projectId} returning id`
    : [];
  if (!rows.length) throw fail('not_found', `There is no queue trigger "${id}" in this project.`);
}

/** A bound table as the API names it: bare in public, schema-qualified elsewhere (also in the runs' input). */
const tableOf = (r: Record<string, unknown>) =>
  r.schema_name === 'public' ? (r.table_name as string) : `${r.schema_name}.${r.table_name}`;

const rowJson = (r: Record<string, unknown>) => ({
  id: r.id,
  table: tableOf(r),
  events: r.events,
  filter: r.filter ?? null,
  workflow: r.workflow,
  created_at: r.created_at,
});

export async function listRowTriggers(p: Platform, projectId: string) {
  const rows = await p.dbs
    .control`select * from platform.workflow_row_triggers where project_id = ${projectId} order by created_at`;
  return rows.map(rowJson);
}

function parseTable(table: unknown): { schema: string; name: string } {
  if (typeof table === 'string') {
    const parts = table.split('.');
    const [schema, name] = parts.length === 2 ? parts : ['public', parts[0]];
    if (parts.length <= 2 && IDENT.test(schema!) && IDENT.test(name!)) return { schema: schema!, name: name! };
  }
  throw fail('invalid_table');
}

function parseEvents(events: unknown): string[] {
  if (
    !Array.isArray(events) ||
    events.length === 0 ||
    events.some((e) => !EVENTS.includes(e)) ||
    new Set(events).size !== events.length
  ) {
    throw fail('invalid_events');
  }
  return EVENTS.filter((e) => events.includes(e));
}

function parseFilter(filter: unknown): Record<string, unknown> | null {
  if (filter === undefined || filter === null) return null;
  const bad = (why: string) => fail('invalid_filter', `filter ${why}.`);
  if (typeof filter !== 'object' || Array.isArray(filter))
    throw bad('must be a flat object of column -> string, number, boolean or null');
  const entries = Object.entries(filter);
  if (entries.length > FILTER_KEYS) throw bad(`has ${entries.length} keys; at most ${FILTER_KEYS} are allowed`);
  if (Buffer.byteLength(JSON.stringify(filter)) > FILTER_BYTES) throw bad('is over 4 KiB');
  for (const [k, v] of entries) {
    if (v !== null && !['string', 'number', 'boolean'].includes(typeof v))
      throw bad(`value of "${k}" must be a string, number, boolean or null`);
  }
  const unstorable = unstorableJson(filter, 'filter');
  if (unstorable) throw fail('invalid_filter', `${unstorable}, which the database cannot store.`);
  return filter as Record<string, unknown>;
}

const triggerName = (id: string) => `hearth_wf_${id.replaceAll('-', '')}`;

export async function createRowTrigger(
  p: Platform,
  registry: ProjectRegistry,
  project: ProjectRow,
  body: Record<string, unknown>,
) {
  const { schema, name } = parseTable(body.table);
  const events = parseEvents(body.events);
  const filter = parseFilter(body.filter);
  const workflow = await requireWorkflow(p, project.id, body.workflow);
  const runtime = await registry.byReference(project.ref);
  if (!runtime) throw fail('not_found', `There is no project with ref "${project.ref}".`);
  const [found] = await runtime.sql`select array(select a.attname::text from pg_catalog.pg_attribute a
        where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped) as columns,
      pg_catalog.pg_get_userbyid(c.relowner) as owner, c.relkind
    from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
    where n.nspname = ${schema} and c.relname = ${name} and c.relkind in ('r', 'p', 'v', 'm', 'f')`;
  if (!found)
    throw fail('invalid_table', `Table ${schema}.${name} does not exist in the project database; create it first.`);
  if (found.relkind !== 'r' && found.relkind !== 'p') {
    const what = { v: 'a view', m: 'a materialized view', f: 'a foreign table' }[found.relkind as 'v'];
    throw fail(
      'invalid_table',
      `${schema}.${name} is ${what}, not a table; a row binding installs a row trigger, so bind the table it reads from.`,
    );
  }
  // The trigger is installed with the platform's rights, so only the project's own tables may get one:
  // a capture trigger on a platform table (auth, storage, the capture table itself) would copy
  // password hashes into run inputs or recurse on every write.
  if (found.owner !== project.owner_role) {
    throw fail(
      'invalid_table',
      `Table ${schema}.${name} belongs to the platform, not to the project; only tables the project owner role owns can be bound.`,
    );
  }
  // A filter on a column the table lacks would never match: refuse it instead of binding silently dead.
  const missing = Object.keys(filter ?? {}).filter((k) => !(found.columns as string[]).includes(k));
  if (missing.length)
    throw fail(
      'invalid_filter',
      `filter names ${missing.map((k) => `"${k}"`).join(', ')}, not a column of ${schema}.${name}.`,
    );
  return p.dbs.control.begin(async (tx) => {
    const [row] =
      await tx`insert into platform.workflow_row_triggers (project_id, schema_name, table_name, events, filter, workflow)
      values (${project.id}, ${schema}, ${name}, ${events}, ${filter === null ? null : tx.json(filter as never)}, ${workflow})
      on conflict (project_id, schema_name, table_name, workflow) do nothing returning *`;
    if (!row) throw fail('table_bound', `Table ${schema}.${name} is already bound to workflow "${workflow}".`);
    // The trigger goes in while the binding row is uncommitted: if installing fails, neither exists.
    // Identifiers are quoted; the binding id and filter are platform-made literals.
    // No filter is passed as {}, which every row contains (the JSON text null would match none).
    await runtime.sql
      .unsafe(
        `create trigger ${quoteIdent(triggerName(row.id as string))} after ${events.join(' or ')} on ${quoteIdent(schema)}.${quoteIdent(name)}
         for each row execute function hearth_workflows.capture(${literal(row.id as string)}, ${literal(JSON.stringify(filter ?? {}))})`,
      )
      .catch((err: { code?: string; message?: string }) => {
        // System catalogs and other tables that take no user triggers are the caller's mistake, not ours.
        if (err.code && UNBINDABLE.has(err.code))
          throw fail('invalid_table', `Table ${schema}.${name} cannot be bound: ${err.message}.`);
        throw err;
      });
    return rowJson(row);
  });
}

export async function deleteRowTrigger(
  p: Platform,
  registry: ProjectRegistry,
  project: ProjectRow,
  id: string,
): Promise<void> {
  const [row] = UUID.test(id)
    ? await p.dbs.control`select * from platform.workflow_row_triggers where id = ${id} and project_id = ${project.id}`
    : [];
  if (!row) throw fail('not_found', `There is no row trigger "${id}" in this project.`);
  const runtime = await registry.byReference(project.ref);
  if (runtime) {
    const [table] =
      await runtime.sql`select to_regclass(${`${quoteIdent(row.schema_name as string)}.${quoteIdent(row.table_name as string)}`}) as t`;
    if (table?.t)
      await runtime.sql.unsafe(
        `drop trigger if exists ${quoteIdent(triggerName(id))} on ${quoteIdent(row.schema_name as string)}.${quoteIdent(row.table_name as string)}`,
      );
    await runtime.sql`delete from hearth_workflows.changes where binding_id = ${id}`;
  }
  await p.dbs.control`delete from platform.workflow_row_triggers where id = ${id}`;
}

/** Projects with workflows on, and their bindings. */
async function enabledBindings(p: Platform) {
  const enabled = await projectsWithSettingOn(p.dbs.control, 'workflows', 'enabled');
  if (!enabled.length) return [];
  return p.dbs.control`select pr.ref, pr.id as project_id,
      (select coalesce(json_agg(json_build_object('queue', q.queue, 'workflow', q.workflow)), '[]') from platform.workflow_queue_triggers q
        where q.project_id = pr.id and q.enabled) as queues,
      exists (select 1 from platform.workflow_row_triggers r where r.project_id = pr.id) as rows
    from unnest(${enabled.map((e) => e.id)}::uuid[], ${enabled.map((e) => e.ref)}::text[]) as pr(id, ref)`;
}

/**
 * Bound queues (project id:queue) found missing at the last pass, so that a missing queue is
 * reported once rather than on every tick. Only logging depends on it.
 */
const missingQueues = new Set<string>();

/** One pass of the queue and row drains; returns how many runs were started or found. */
export async function drainTriggers(p: Platform, registry: ProjectRegistry): Promise<number> {
  let started = 0;
  for (const b of await enabledBindings(p)) {
    const runtime = await registry.byReference(b.ref as string);
    if (!runtime) continue;
    for (const q of b.queues as { queue: string; workflow: string }[]) {
      const bound = `${b.project_id}:${q.queue}`;
      started += await drainQueue(p, runtime.sql, { id: b.project_id as string }, q.queue, q.workflow).then(
        (n) => {
          missingQueues.delete(bound);
          return n;
        },
        (err) => {
          // A dropped bound queue would otherwise log the same warning on every tick until it is back.
          const missing = err instanceof HearthError && err.code === 'not_found';
          if (!missing || !missingQueues.has(bound)) p.log.warn({ err, queue: q.queue }, 'queue trigger drain failed');
          if (missing) missingQueues.add(bound);
          return 0;
        },
      );
    }
    if (b.rows)
      started += await drainRows(p, runtime.sql, { id: b.project_id as string }).catch((err) => {
        p.log.warn({ err, project: b.ref }, 'row trigger drain failed');
        return 0;
      });
  }
  return started;
}

async function drainQueue(
  p: Platform,
  sql: import('postgres').Sql,
  project: { id: string },
  queue: string,
  workflow: string,
): Promise<number> {
  let started = 0;
  for (const m of await readMessages(sql, queue, QUEUE_VT_SECONDS, QUEUE_BATCH)) {
    try {
      await startRun(p, project, workflow, m.message, {
        // The generation tells a message of a re-created queue (whose ids start at 1 again) from the
        // old queue's message of the same id, which would otherwise hand back the old run.
        idempotencyKey: `queue:${queue}:${m.generation}:${m.msgId}`,
        trigger: 'queue',
      });
      await deleteMessage(sql, queue, m.msgId);
      started++;
    } catch (err) {
      p.log.warn({ err, queue, msgId: m.msgId, reads: m.readCt }, 'queue message could not start a workflow run');
      if (m.readCt >= MAX_READS) await archiveMessage(sql, queue, m.msgId);
    }
  }
  return started;
}

/**
 * Row bindings whose workflow was found disabled at the last pass, so that dropping their changes is
 * logged once rather than once per change. Only logging depends on it.
 */
const disabledBindings = new Set<string>();

async function drainRows(p: Platform, sql: import('postgres').Sql, project: { id: string }): Promise<number> {
  const rows = await p.dbs.control`select t.id, t.workflow, t.schema_name, t.table_name,
      exists (select 1 from platform.workflow_definitions d
        where d.project_id = t.project_id and d.name = t.workflow and d.enabled) as enabled
    from platform.workflow_row_triggers t where t.project_id = ${project.id}`;
  const bindings = new Map(rows.map((r) => [r.id as string, r.workflow as string]));
  const tables = new Map(rows.map((r) => [r.id as string, tableOf(r)]));
  const disabled = new Set<string>();
  for (const r of rows) {
    if (r.enabled) disabledBindings.delete(r.id as string);
    else disabled.add(r.id as string);
  }
  return (await sql.begin(async (tx) => {
    const changes =
      await tx`select id::text, binding_id, action, table_name, record, old, ts from hearth_workflows.changes
      where not dead order by id limit ${ROW_BATCH} for update skip locked`;
    let started = 0;
    for (const c of changes) {
      const workflow = bindings.get(c.binding_id as string);
      if (disabled.has(c.binding_id as string)) {
        // Disabling stops new runs from every trigger (SPEC 4.6): the change is dropped, not retried
        // until the workflow is enabled again (which would start runs for changes made while it was off).
        await tx`delete from hearth_workflows.changes where id = ${c.id as string}`;
        if (!disabledBindings.has(c.binding_id as string))
          p.log.warn(
            { binding: c.binding_id, workflow },
            'row changes dropped: the bound workflow is disabled (logged once until it is enabled again)',
          );
        disabledBindings.add(c.binding_id as string);
        continue;
      }
      try {
        if (!workflow) throw new Error('the binding no longer exists');
        const input = {
          trigger_id: c.binding_id,
          action: c.action,
          table: tables.get(c.binding_id as string) ?? c.table_name,
          record: c.record,
          old: c.old ?? null,
          ts: c.ts,
        };
        await startRun(p, project, workflow, input, { idempotencyKey: `row:${c.binding_id}:${c.id}`, trigger: 'row' });
        await tx`delete from hearth_workflows.changes where id = ${c.id as string}`;
        started++;
      } catch (err) {
        p.log.warn({ err: truncate(String(err)), change: c.id }, 'row change could not start a workflow run');
        await tx`update hearth_workflows.changes set attempts = attempts + 1, dead = attempts + 1 >= ${MAX_READS} where id = ${c.id as string}`;
      }
    }
    return started;
  })) as number;
}

/**
 * A row change that could not start a run in MAX_READS passes is kept (dead)
 * as long as a finished run is, then removed; a binding's removal takes its
 * changes with it at once. Run by the hourly retention pass.
 */
export async function pruneDeadChanges(
  p: Platform,
  registry: ProjectRegistry,
  now: Date = p.clock.now(),
): Promise<number> {
  const cutoff = (now.getTime() - RETENTION_MS) / 1000; // a change's ts is in epoch seconds
  const projects = await p.dbs.control`select distinct pr.ref from platform.workflow_row_triggers t
    join platform.projects pr on pr.id = t.project_id`;
  let removed = 0;
  for (const { ref } of projects) {
    const runtime = await registry.byReference(ref as string);
    if (runtime)
      removed += (await runtime.sql`delete from hearth_workflows.changes where dead and ts < ${cutoff}`).count;
  }
  return removed;
}
