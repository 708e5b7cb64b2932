/**
 * Validation of a workflow definition (SPEC 2.8, 2.9, 4.6): the whole body is
 * checked before anything is stored, and the first violation is a 400
 * invalid_definition whose message names the step. The result is the
 * normalised step list with every default filled in, which is what the
 * engine reads back.
 */
import { fail } from '../errors.ts';
import { targetRefusal, type AllowList } from '../outbound/address.ts';
import { unstorableJson, urlNotAsWritten } from '../platform/text.ts';

export const WORKFLOW_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
export const STEP_KEY = /^[A-Za-z0-9_-]{1,64}$/;
export const SIGNAL_NAME = /^[A-Za-z0-9_.:-]{1,100}$/;
const QUEUE_NAME = /^[a-z][a-z0-9_]{0,47}$/;
const FUNCTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export const LIMITS = {
  steps: 200,
  payloadBytes: 256 * 1024,
  sqlBytes: 64 * 1024,
  secretChars: 256,
  maxAttempts: 100,
  attemptTimeoutSeconds: 900,
  defaultAttemptTimeoutSeconds: 30,
  defaultWaitSeconds: 7 * 86400,
  maxWaitSeconds: 30 * 86400,
  maxSleepSeconds: 30 * 86400,
  defaultAttempts: 3,
} as const;

export const KINDS = [
  'enqueue',
  'sql',
  'webhook',
  'function',
  'sleep',
  'fanout',
  'join',
  'wait_for_signal',
  'subworkflow',
] as const;
export type Kind = (typeof KINDS)[number];
export const ACTION_KINDS = ['enqueue', 'sql', 'webhook', 'function'] as const;
export type ActionKind = (typeof ACTION_KINDS)[number];

/** A side-effecting action: a fan-out child or a compensating action. */
export interface Action {
  kind: ActionKind;
  target: string;
  payload: unknown;
  /** Plain secret while validating; the stored form holds secret_sealed instead. */
  secret?: string;
  secret_sealed?: string;
  /** Set while validating when the body asked for no secret (secret: null or secret_set: false). */
  unsigned?: true;
}

export interface Step {
  key: string;
  kind: Kind;
  target?: string;
  payload: unknown;
  secret?: string;
  secret_sealed?: string;
  unsigned?: true;
  max_attempts: number;
  timeout_seconds: number;
  sleep_seconds?: number;
  sleep_for?: string;
  signal?: string;
  children?: Step[];
  compensate?: Action;
}

const COMMON = ['key', 'kind', 'payload', 'max_attempts', 'timeout_seconds', 'compensate'];
/** The fields each kind uses, and so what a read shows of it. */
export const FIELDS: Record<Kind, string[]> = {
  enqueue: [...COMMON, 'target'],
  sql: [...COMMON, 'target'],
  // secret_set is what a read shows; accepted so that a definition read back can be PUT again.
  webhook: [...COMMON, 'target', 'secret', 'secret_set'],
  function: [...COMMON, 'target'],
  sleep: ['key', 'kind', 'payload', 'sleep_for'],
  fanout: ['key', 'kind', 'payload', 'children'],
  join: ['key', 'kind', 'payload'],
  wait_for_signal: ['key', 'kind', 'payload', 'signal', 'timeout_seconds'],
  subworkflow: ['key', 'kind', 'payload', 'target', 'timeout_seconds'],
};
/**
 * SPEC 2.9 gives every step these, so a definition may put them on any kind.
 * Where the kind has no use for one (max_attempts of a sleep, a wait, a
 * sub-workflow, a fanout or a join, which make a single attempt;
 * timeout_seconds of a sleep, a fanout or a join) it is checked and dropped.
 */
const GENERIC = ['max_attempts', 'timeout_seconds'];

const invalid = (message: string) => fail('invalid_definition', message);

/** Seconds in a duration such as 45s, 30m, 1h30m, 72h, 2d; null when it is not one. */
export function parseDuration(text: unknown): number | null {
  if (typeof text !== 'string' || text.length > 32) return null;
  const m = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(text);
  if (!m || text === '') return null;
  const [, d, h, min, s] = m.map((v) => Number(v ?? 0));
  return d! * 86400 + h! * 3600 + min! * 60 + s!;
}

function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value ?? null));
}

function checkTarget(where: string, kind: Kind, target: unknown, allow: AllowList): string {
  if (typeof target !== 'string' || target === '')
    throw invalid(`${where}: a ${kind} step needs a target (${targetMeaning(kind)}).`);
  switch (kind) {
    case 'enqueue':
      if (!QUEUE_NAME.test(target))
        throw invalid(`${where}: target "${target}" is not a queue name (^[a-z][a-z0-9_]{0,47}$).`);
      break;
    case 'sql':
      if (Buffer.byteLength(target) > LIMITS.sqlBytes)
        throw invalid(`${where}: the SQL statement is over ${LIMITS.sqlBytes / 1024} KiB.`);
      break;
    case 'webhook': {
      let url: URL | null = null;
      try {
        url = new URL(target);
      } catch {
        /* reported below */
      }
      if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:'))
        throw invalid(`${where}: target "${target}" is not an http(s) URL.`);
      const raw = urlNotAsWritten(target);
      if (raw) throw invalid(`${where}: the webhook URL ${raw}.`);
      // As for a cron webhook job: credentials in a URL end up in logs and in every read of the definition.
      if (url.username || url.password)
        throw invalid(
          `${where}: put no user name or password in the webhook URL; give the step a secret, and the receiver verifies the X-Service-Signature header instead.`,
        );
      // The check every saved outbound target gets; names are judged again at each delivery.
      const refused = targetRefusal(url.hostname, allow);
      if (refused)
        throw invalid(
          `${where}: the webhook URL points at ${url.hostname}, ${refused}; webhooks may only reach public addresses.`,
        );
      break;
    }
    case 'function':
      if (!FUNCTION_NAME.test(target)) throw invalid(`${where}: target "${target}" is not a function name.`);
      break;
    case 'subworkflow':
      if (!WORKFLOW_NAME.test(target))
        throw invalid(`${where}: target "${target}" is not a workflow name (^[a-z0-9][a-z0-9_-]{0,63}$).`);
      break;
    default:
      break;
  }
  return target;
}

function targetMeaning(kind: Kind): string {
  return (
    {
      enqueue: 'a queue name',
      sql: 'one SQL statement',
      webhook: 'an http(s) URL',
      function: 'a function name',
      subworkflow: 'a workflow name',
    }[kind as 'sql'] ?? 'none'
  );
}

function checkInt(where: string, field: string, value: unknown, min: number, max: number, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (!Number.isInteger(value) || (value as number) < min || (value as number) > max) {
    throw invalid(`${where}: ${field} must be an integer between ${min} and ${max}.`);
  }
  return value as number;
}

/**
 * The secret of a webhook step or action: a new one, none (secret null or
 * secret_set false), or, when the body says nothing, the previous version's
 * (definitions.ts carries it over, so a definition read back can be PUT again).
 */
function applySecret(where: string, raw: Record<string, unknown>, into: { secret?: string; unsigned?: true }): void {
  const { secret, secret_set: set } = raw;
  if (set !== undefined && typeof set !== 'boolean') throw invalid(`${where}: secret_set must be true or false.`);
  if (secret === undefined || secret === null) {
    if (secret === null || set === false) into.unsigned = true;
    return;
  }
  if (typeof secret !== 'string' || secret === '' || secret.length > LIMITS.secretChars) {
    throw invalid(`${where}: secret must be a non-empty string of at most ${LIMITS.secretChars} characters.`);
  }
  into.secret = secret;
}

function checkPayload(where: string, payload: unknown): unknown {
  if (jsonBytes(payload) > LIMITS.payloadBytes) throw invalid(`${where}: payload is over 256 KiB.`);
  return payload ?? null;
}

function checkAction(where: string, raw: unknown, role: string, allow: AllowList): Action {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw invalid(`${where}: ${role} must be an object {kind, target, payload}.`);
  const a = raw as Record<string, unknown>;
  for (const f of Object.keys(a)) {
    if (!['kind', 'target', 'payload', 'secret', 'secret_set'].includes(f))
      throw invalid(`${where}: ${role} has an unknown field "${f}".`);
  }
  if (!ACTION_KINDS.includes(a.kind as ActionKind)) {
    throw invalid(
      `${where}: a ${role} must be of kind enqueue, sql, webhook or function, not ${JSON.stringify(a.kind)}.`,
    );
  }
  const kind = a.kind as ActionKind;
  const action: Action = {
    kind,
    target: checkTarget(`${where} ${role}`, kind, a.target, allow),
    payload: checkPayload(`${where} ${role}`, a.payload),
  };
  if ((a.secret !== undefined || a.secret_set !== undefined) && kind !== 'webhook')
    throw invalid(`${where}: only a webhook ${role} takes a secret.`);
  if (kind === 'webhook') applySecret(`${where} ${role}`, a, action);
  return action;
}

function checkStep(raw: unknown, where: string, keys: Set<string>, child: boolean, allow: AllowList): Step {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalid(`${where} must be an object.`);
  const s = raw as Record<string, unknown>;
  if (typeof s.key !== 'string' || !STEP_KEY.test(s.key)) {
    throw invalid(`${where}: key must be 1-64 letters, digits, "_" or "-" (got ${JSON.stringify(s.key)}).`);
  }
  const at = `step "${s.key}" (${where})`;
  if (keys.has(s.key))
    throw invalid(`${at}: the key "${s.key}" is used twice; step keys are unique within a definition.`);
  keys.add(s.key);
  if (!KINDS.includes(s.kind as Kind))
    throw invalid(`${at}: kind must be one of ${KINDS.join(', ')} (got ${JSON.stringify(s.kind)}).`);
  const kind = s.kind as Kind;
  if (child && !ACTION_KINDS.includes(kind as ActionKind)) {
    throw invalid(`${at}: a fan-out child must be of kind enqueue, sql, webhook or function, not ${kind}.`);
  }
  for (const f of Object.keys(s)) {
    if (!FIELDS[kind].includes(f) && !GENERIC.includes(f)) throw invalid(`${at}: a ${kind} step has no field "${f}".`);
  }
  const step: Step = {
    key: s.key,
    kind,
    payload: checkPayload(at, s.payload),
    max_attempts: 1,
    timeout_seconds: LIMITS.defaultAttemptTimeoutSeconds,
  };
  if (ACTION_KINDS.includes(kind as ActionKind)) {
    step.target = checkTarget(at, kind, s.target, allow);
    step.max_attempts = checkInt(at, 'max_attempts', s.max_attempts, 1, LIMITS.maxAttempts, LIMITS.defaultAttempts);
    step.timeout_seconds = checkInt(
      at,
      'timeout_seconds',
      s.timeout_seconds,
      1,
      LIMITS.attemptTimeoutSeconds,
      LIMITS.defaultAttemptTimeoutSeconds,
    );
    if (kind === 'webhook') applySecret(at, s, step);
    if (s.compensate !== undefined && s.compensate !== null)
      step.compensate = checkAction(at, s.compensate, 'compensating action', allow);
  } else {
    checkInt(at, 'max_attempts', s.max_attempts, 1, LIMITS.maxAttempts, 1);
    if (!FIELDS[kind].includes('timeout_seconds'))
      checkInt(at, 'timeout_seconds', s.timeout_seconds, 1, LIMITS.maxWaitSeconds, 0);
  }
  switch (kind) {
    case 'sleep': {
      const seconds = parseDuration(s.sleep_for);
      if (s.sleep_for === undefined)
        throw invalid(`${at}: a sleep step needs sleep_for, a duration such as 45s, 30m, 1h30m or 72h.`);
      if (seconds === null)
        throw invalid(
          `${at}: sleep_for ${JSON.stringify(s.sleep_for)} is not a duration such as 45s, 30m, 1h30m or 72h.`,
        );
      if (seconds < 1 || seconds > LIMITS.maxSleepSeconds)
        throw invalid(`${at}: sleep_for must be between 1s and 30 days (720h).`);
      step.sleep_for = s.sleep_for as string;
      step.sleep_seconds = seconds;
      break;
    }
    case 'wait_for_signal':
      if (typeof s.signal !== 'string' || !SIGNAL_NAME.test(s.signal)) {
        throw invalid(`${at}: a wait_for_signal step needs signal, 1-100 letters, digits or "_.:-".`);
      }
      step.signal = s.signal;
      step.timeout_seconds = checkInt(
        at,
        'timeout_seconds',
        s.timeout_seconds,
        1,
        LIMITS.maxWaitSeconds,
        LIMITS.defaultWaitSeconds,
      );
      break;
    case 'subworkflow':
      step.target = checkTarget(at, kind, s.target, allow);
      step.timeout_seconds = checkInt(
        at,
        'timeout_seconds',
        s.timeout_seconds,
        1,
        LIMITS.maxWaitSeconds,
        LIMITS.defaultWaitSeconds,
      );
      break;
    case 'fanout': {
      if (!Array.isArray(s.children) || s.children.length === 0)
        throw invalid(`${at}: a fanout step needs children, a non-empty array of steps.`);
      step.children = s.children.map((c, i) => checkStep(c, `${where}.children[${i}]`, keys, true, allow));
      break;
    }
    default:
      break;
  }
  return step;
}

export interface Definition {
  enabled: boolean;
  steps: Step[];
}

/**
 * Validates a PUT body; throws 400 invalid_definition / invalid_request.
 * `allow` is HEARTH_OUTBOUND_ALLOW, the ranges webhook targets may reach besides public addresses.
 */
export function validateDefinition(body: unknown, allow: AllowList): Definition {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw fail('invalid_request', 'The body must be a JSON object {enabled?, steps: [step]}.');
  }
  const b = body as Record<string, unknown>;
  for (const f of Object.keys(b)) {
    // name, version and created_at are what a read shows; the path and the service decide them, so they are ignored.
    if (!['enabled', 'steps', 'name', 'version', 'created_at'].includes(f)) {
      throw invalid(`The definition has an unknown field "${f}"; it takes enabled and steps.`);
    }
  }
  if (b.enabled !== undefined && typeof b.enabled !== 'boolean')
    throw fail('invalid_request', 'enabled must be true or false.');
  if (!Array.isArray(b.steps) || b.steps.length === 0) throw invalid('steps must be a non-empty array of steps.');
  const unstorable = unstorableJson(b.steps, 'steps');
  if (unstorable) throw invalid(`${unstorable}, which the database cannot store.`);
  const keys = new Set<string>();
  const steps = b.steps.map((s, i) => checkStep(s, `steps[${i}]`, keys, false, allow));
  if (keys.size > LIMITS.steps) {
    const over = [...keys][LIMITS.steps];
    throw invalid(
      `step "${over}": the definition has ${keys.size} steps (fan-out children included); the limit is ${LIMITS.steps}.`,
    );
  }
  let openFanout = false;
  for (const step of steps) {
    if (step.kind === 'fanout') openFanout = true;
    if (step.kind === 'join') {
      if (!openFanout)
        throw invalid(`step "${step.key}": a join must come after a fanout (with no other join in between).`);
      openFanout = false;
    }
  }
  return { enabled: b.enabled ?? true, steps };
}

/** The fanout a join waits for: the nearest fanout before it. */
export function fanoutBefore(steps: Step[], joinIndex: number): number {
  for (let i = joinIndex - 1; i >= 0; i--) if (steps[i]!.kind === 'fanout') return i;
  return -1;
}
