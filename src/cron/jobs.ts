/**
 * Cron jobs of a project (SPEC 2.14, 4.5): validation, creation, listing and
 * deletion. There is no edit: a schedule changes by deleting and recreating
 * the job, so a webhook job's secret is never rotated in place.
 */
import type postgres from 'postgres';
import type { Platform } from '../context.ts';
import { type ErrorCode, fail } from '../errors.ts';
import { parseAllowList, targetRefusal } from '../outbound/address.ts';
import type { ProjectRow } from '../platform/projects.ts';
import { refuseUnknownFields, unstorableJson, urlNotAsWritten } from '../platform/text.ts';
import { randomToken } from '../secrets.ts';
import { isValidQueueName, queueExists } from '../queues/index.ts';
import { parseSchedule } from './schedule.ts';
import { checkWorkflowTarget } from './workflow-target.ts';

export const TARGET_KINDS = ['enqueue', 'webhook', 'workflow'] as const;
export type TargetKind = (typeof TARGET_KINDS)[number];

/** Runs kept per job, newest first. */
export const RUN_HISTORY = 20;
const NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const FIELDS = ['name', 'schedule', 'target_kind', 'target', 'payload'];
const MAX_PAYLOAD_BYTES = 256 * 1024;
const MAX_URL_LENGTH = 2048;

export interface CronRun {
  scheduled_for: Date;
  started_at: Date;
  finished_at: Date | null;
  status: 'running' | 'succeeded' | 'failed';
  http_status: number | null;
  result: unknown;
  error: string | null;
}

export interface CronJob {
  name: string;
  schedule: string;
  target_kind: TargetKind;
  target: string;
  payload: unknown;
  /** Webhook jobs only: a signing secret exists (it is never shown again). */
  secret_set?: true;
  created_at: Date;
  next_run_at: Date | null;
  last_run: {
    scheduled_for: Date;
    finished_at: Date;
    status: 'succeeded' | 'failed';
    http_status: number | null;
    error: string | null;
  } | null;
  runs: CronRun[];
}

const bad = (code: ErrorCode, message: string) => fail(code, message);

function checkWebhookUrl(p: Platform, target: string): void {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw bad('invalid_target', `target "${target}" is not a URL; a webhook job needs an https:// URL.`);
  }
  if (url.protocol !== 'https:')
    throw bad('invalid_target', `A webhook job's target must be an https:// URL, not ${url.protocol}//.`);
  const raw = urlNotAsWritten(target);
  if (raw) throw bad('invalid_target', `The webhook URL ${raw}.`);
  if (target.length > MAX_URL_LENGTH)
    throw bad('invalid_target', `The webhook URL is longer than ${MAX_URL_LENGTH} characters.`);
  if (url.username || url.password)
    throw bad(
      'invalid_target',
      'Put no user name or password in the webhook URL; receivers verify the X-Service-Signature header instead.',
    );
  // What can be judged now is (the same check as every saved target); a host name is also checked at every delivery.
  const reason = targetRefusal(url.hostname, parseAllowList(p.config.outboundAllow));
  if (reason)
    throw bad(
      'invalid_target',
      `The webhook URL points at ${url.hostname}, ${reason}; webhooks may only reach public addresses.`,
    );
}

async function checkTarget(p: Platform, project: ProjectRow, kind: TargetKind, target: unknown): Promise<string> {
  if (typeof target !== 'string' || !target) {
    const what = { enqueue: 'a queue name', webhook: 'an https:// URL', workflow: 'a workflow name' }[kind];
    throw bad('invalid_target', `target must be ${what} for target_kind ${kind}.`);
  }
  if (kind === 'enqueue') {
    if (!isValidQueueName(target)) {
      throw bad(
        'invalid_queue',
        `"${target}" is not a queue name: use a lower-case letter followed by up to 47 lower-case letters, digits or underscores.`,
      );
    }
    if (!(await queueExists(p.dbs.project(project.db_name), target))) {
      throw bad(
        'queue_not_found',
        `The project has no queue "${target}". Create it first (select pgmq.create('${target}');), then the job.`,
      );
    }
  } else if (kind === 'webhook') {
    checkWebhookUrl(p, target);
  } else {
    if (!NAME.test(target))
      throw bad('invalid_workflow', `"${target}" is not a workflow name (^[a-z0-9][a-z0-9_-]{0,63}$).`);
    await checkWorkflowTarget(p, project, target);
  }
  return target;
}

function checkPayload(payload: unknown): unknown {
  // Parsed from the JSON body, so it is JSON; what jsonb refuses and its size are left to check.
  const value = payload === undefined ? {} : payload;
  const unstorable = unstorableJson(value, 'payload');
  if (unstorable) throw bad('invalid_payload', `${unstorable}, which the database cannot store.`);
  if (Buffer.byteLength(JSON.stringify(value)) > MAX_PAYLOAD_BYTES) {
    throw bad('invalid_payload', `payload is larger than ${MAX_PAYLOAD_BYTES / 1024} KiB.`);
  }
  return value;
}

/** Creates a job; the response carries a webhook job's secret, the only time it is shown. */
export async function createCronJob(
  p: Platform,
  project: ProjectRow,
  body: Record<string, unknown>,
): Promise<CronJob & { secret?: string }> {
  refuseUnknownFields(body, FIELDS, 'A cron job');
  const { name, target_kind: kind } = body;
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw bad(
      'invalid_name',
      'name must be 1-64 characters of lower-case letters, digits, _ and -, starting with a letter or digit.',
    );
  }
  const schedule = parseSchedule(body.schedule);
  if (!TARGET_KINDS.includes(kind as TargetKind))
    throw bad('invalid_target_kind', `target_kind must be one of ${TARGET_KINDS.join(', ')}.`);
  const payload = checkPayload(body.payload);
  const target = await checkTarget(p, project, kind as TargetKind, body.target);

  const secret = kind === 'webhook' ? `whsec_${randomToken(40)}` : null;
  const sql = p.dbs.control;
  // Bound as text and cast, so a JSON null payload is stored as JSON null, not SQL NULL.
  const [row] = await sql`insert into platform.cron_jobs
      (project_id, name, schedule, target_kind, target, payload, secret_sealed, created_at)
    values (${project.id}, ${name}, ${schedule.expression}, ${kind as string}, ${target},
      ${JSON.stringify(payload)}::text::jsonb, ${secret ? p.master.encrypt(secret) : null}, ${p.clock.now()})
    on conflict (project_id, name) do nothing
    returning *`;
  if (!row)
    throw fail('job_exists', `The project already has a cron job named "${name}". Delete it first to replace it.`);
  const job = toJob(p, row, []);
  return secret ? { ...job, secret } : job;
}

export async function listCronJobs(p: Platform, project: ProjectRow): Promise<CronJob[]> {
  const rows = await p.dbs.control`select * from platform.cron_jobs where project_id = ${project.id} order by name`;
  return withRuns(p, rows);
}

export async function getCronJob(p: Platform, project: ProjectRow, name: string): Promise<CronJob> {
  // No job can bear a name outside NAME (one with a NUL would not even reach Postgres).
  if (!NAME.test(name)) throw missing(name);
  const rows = await p.dbs
    .control`select * from platform.cron_jobs where project_id = ${project.id} and name = ${name}`;
  if (!rows.length) throw missing(name);
  return (await withRuns(p, rows))[0]!;
}

export async function deleteCronJob(p: Platform, project: ProjectRow, name: string): Promise<void> {
  if (!NAME.test(name)) throw missing(name);
  const rows = await p.dbs
    .control`delete from platform.cron_jobs where project_id = ${project.id} and name = ${name} returning id`;
  if (!rows.length) throw missing(name);
}

const missing = (name: string) => fail('not_found', `The project has no cron job named "${name}".`);

async function withRuns(p: Platform, rows: postgres.RowList<postgres.Row[]>): Promise<CronJob[]> {
  if (!rows.length) return [];
  const fires = await p.dbs.control`select * from platform.cron_fires
    where job_id = any(${rows.map((r) => r.id as string)}::uuid[]) order by minute desc`;
  const runs = new Map<string, CronRun[]>();
  for (const f of fires) {
    const list = runs.get(f.job_id as string) ?? [];
    if (list.length < RUN_HISTORY) list.push(toRun(f));
    runs.set(f.job_id as string, list);
  }
  return rows.map((r) => toJob(p, r, runs.get(r.id as string) ?? []));
}

function toRun(f: postgres.Row): CronRun {
  return {
    scheduled_for: f.minute,
    started_at: f.started_at,
    finished_at: f.finished_at,
    status: f.status,
    http_status: f.http_status,
    result: f.result,
    error: f.error,
  };
}

function toJob(p: Platform, r: postgres.Row, runs: CronRun[]): CronJob {
  return {
    name: r.name,
    schedule: r.schedule,
    target_kind: r.target_kind,
    target: r.target,
    payload: r.payload,
    ...(r.secret_sealed ? { secret_set: true as const } : {}),
    created_at: r.created_at,
    next_run_at: parseSchedule(r.schedule).next(p.clock.now()),
    last_run: r.last_status
      ? {
          scheduled_for: r.last_minute,
          finished_at: r.last_finished_at,
          status: r.last_status,
          http_status: r.last_http_status,
          error: r.last_error,
        }
      : null,
    runs,
  };
}
