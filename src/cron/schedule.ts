/**
 * Five-field cron expressions (minute hour day-of-month month day-of-week), in
 * UTC, parsed by croner and matched the way pg_cron (Vixie cron) matches them:
 * - lists, ranges, steps, and month/day names (jan-dec, sun-sat; 0 and 7 are
 *   Sunday);
 * - day-of-month and day-of-week: a day matches when EITHER field matches,
 *   except that when either field starts with `*` both must match. So
 *   `0 0 13 * 5` runs on every 13th and every Friday, `0 0 * * 5` only on
 *   Fridays, and `0 0 *\/2 * 1` only on Mondays that fall on an odd day.
 *   croner's own OR rule (domAndDow: false) applies only to a field that is
 *   exactly `*`, so a field like `*\/2` switches croner to AND (domAndDow: true).
 * croner's extensions (L, W, #, ?, @nicknames, seconds, years) are not cron
 * and are refused, so an expression means the same here as in pg_cron.
 */
import { Cron } from 'croner';
import { fail } from '../errors.ts';

export interface Schedule {
  /** The expression as stored: the fields as written (names keep their case), separated by single spaces. */
  readonly expression: string;
  /** Whether the job fires in the minute that starts at `minute` (UTC). */
  matches(minute: Date): boolean;
  /** The start of the next matching minute after `after`. */
  next(after: Date): Date | null;
}

const FIELDS = ['minute', 'hour', 'day-of-month', 'month', 'day-of-week'] as const;
/** Allowed values per field, checked here so the message names them in cron's numbering (croner's counts from 0). */
const RANGES = [
  [0, 59],
  [0, 23],
  [1, 31],
  [1, 12],
  [0, 7],
] as const;
const NUMERIC = /^[0-9*,/-]+$/;
/** The names a field may use in place of numbers (month and day-of-week only); any other letter is not cron. */
const NAMES = [
  null,
  null,
  null,
  /jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec/g,
  /sun|mon|tue|wed|thu|fri|sat/g,
] as const;

const invalid = (message: string) =>
  fail(
    'invalid_schedule',
    `${message} A schedule is five fields in UTC: minute hour day-of-month month day-of-week, e.g. "*/5 * * * *" or "0 3 * * mon-fri".`,
  );

export function parseSchedule(input: unknown): Schedule {
  if (typeof input !== 'string' || !input.trim()) throw invalid('schedule must be a non-empty string.');
  const written = input.trim().split(/\s+/);
  // Names are case-insensitive (JUL, Mon); croner and the checks below read them in lower case.
  const fields = written.map((f) => f.toLowerCase());
  if (fields[0]!.startsWith('@')) {
    throw invalid(
      `"${input}" is a nickname; nicknames such as @reboot, @hourly and @daily are not supported (jobs run on a schedule only, never at start-up).`,
    );
  }
  if (fields.length === 6) {
    throw invalid(
      `"${input}" has 6 fields; a seconds (or year) field is not supported: the granularity is one minute.`,
    );
  }
  if (fields.length !== 5) throw invalid(`"${input}" has ${fields.length} field(s), not 5.`);
  fields.forEach((field, i) => {
    const names = NAMES[i];
    if (!NUMERIC.test(names ? field.replace(names, '0') : field))
      throw invalid(
        `The ${FIELDS[i]} field "${written[i]}" may only hold numbers${i >= 3 ? ', names' : ''}, *, lists (,), ranges (-) and steps (/).`,
      );
    const [low, high] = RANGES[i]!;
    // Numbers before a "/" are values; the one after it is a step.
    for (const part of field.split(',')) {
      for (const value of (part.split('/')[0] ?? '').match(/\d+/g) ?? []) {
        if (Number(value) < low || Number(value) > high)
          throw invalid(`The ${FIELDS[i]} field "${written[i]}" holds ${value}; allowed values are ${low}-${high}.`);
      }
    }
  });
  const andDays = fields[2]!.startsWith('*') || fields[4]!.startsWith('*');
  let cron: Cron;
  try {
    cron = new Cron(fields.join(' '), { mode: '5-part', timezone: 'UTC', domAndDow: andDays, paused: true });
  } catch (err) {
    throw invalid(`"${input}" is not a valid schedule: ${(err as Error).message.replace(/^CronPattern: /, '')}.`);
  }
  if (cron.nextRun(new Date(0)) === null) throw invalid(`"${input}" never matches any minute.`);
  return {
    expression: written.join(' '),
    matches: (minute) => cron.match(minute),
    next: (after) => cron.nextRun(after),
  };
}

export const startOfMinute = (t: Date): Date => new Date(Math.floor(t.getTime() / 60_000) * 60_000);
