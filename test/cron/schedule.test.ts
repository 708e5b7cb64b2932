// Five-field schedules as pg_cron reads them: a row per expression and minute.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { HearthError } from '../../src/errors.ts';
import { parseSchedule, startOfMinute } from '../../src/cron/schedule.ts';

// 2026-02-13 is a Friday; 2026-02-06 a Friday; 2026-02-07 a Saturday; 2026-02-09 a Monday.
const matches: Array<[string, string, boolean]> = [
  ['* * * * *', '2026-02-13T10:17Z', true],
  ['17 10 * * *', '2026-02-13T10:17Z', true],
  ['17 10 * * *', '2026-02-13T10:18Z', false],
  ['*/15 * * * *', '2026-02-13T10:45Z', true],
  ['*/15 * * * *', '2026-02-13T10:46Z', false],
  ['5-20/5 * * * *', '2026-02-13T10:15Z', true],
  ['5-20/5 * * * *', '2026-02-13T10:25Z', false],
  ['1,2,59 * * * *', '2026-02-13T10:59Z', true],
  ['0 9-17 * * *', '2026-02-13T18:00Z', false],
  ['0 0 * feb *', '2026-02-13T00:00Z', true],
  ['0 0 * jan,mar-dec *', '2026-02-13T00:00Z', false],
  ['0 0 * * fri', '2026-02-13T00:00Z', true],
  ['0 0 * * mon-thu', '2026-02-13T00:00Z', false],
  ['0 0 * * 0', '2026-02-15T00:00Z', true], // Sunday as 0
  ['0 0 * * 7', '2026-02-15T00:00Z', true], // and as 7
  ['0 0 * * SUN', '2026-02-15T00:00Z', true],
  // Day-of-month OR day-of-week when neither starts with *:
  ['0 0 13 * 5', '2026-02-13T00:00Z', true], // both
  ['0 0 13 * 5', '2026-02-06T00:00Z', true], // a Friday, not the 13th
  ['0 0 13 * 5', '2026-03-13T00:00Z', true], // the 13th, a Friday too
  ['0 0 14 * 5', '2026-02-14T00:00Z', true], // the 14th, a Saturday
  ['0 0 13 * 5', '2026-02-07T00:00Z', false], // neither
  // ... AND when either starts with *:
  ['0 0 * * 5', '2026-02-14T00:00Z', false],
  ['0 0 13 * *', '2026-02-06T00:00Z', false],
  ['0 0 */2 * 1', '2026-02-09T00:00Z', true], // an odd day (9th) and a Monday
  ['0 0 */2 * 1', '2026-02-16T00:00Z', false], // a Monday on an even day
  ['0 0 */2 * 1', '2026-02-11T00:00Z', false], // an odd day, not a Monday
  ['0 0 1 * */3', '2026-02-01T00:00Z', true], // Sunday the 1st: both
  ['0 0 1 * */3', '2026-02-04T00:00Z', false], // a Wednesday (3), not the 1st
];

describe('matching', () => {
  for (const [expression, minute, expected] of matches) {
    test(`${expression} ${expected ? 'matches' : 'does not match'} ${minute}`, () => {
      assert.equal(parseSchedule(expression).matches(new Date(minute)), expected);
    });
  }

  test('next() is the start of the next matching minute, in UTC', () => {
    const s = parseSchedule('30 2 * * mon');
    assert.equal(s.next(new Date('2026-02-13T10:17:42Z'))?.toISOString(), '2026-02-16T02:30:00.000Z');
    assert.equal(
      parseSchedule('* * * * *').next(new Date('2026-02-13T10:17:42Z'))?.toISOString(),
      '2026-02-13T10:18:00.000Z',
    );
  });

  test('extra spaces are dropped; names keep the case they were written in, and match in any case', () => {
    const s = parseSchedule('  0   3 * JAN  MON-FRI ');
    assert.equal(s.expression, '0 3 * JAN MON-FRI');
    assert.equal(s.matches(new Date('2026-01-05T03:00:00Z')), true, 'a Monday in January');
    assert.equal(s.matches(new Date('2026-01-04T03:00:00Z')), false, 'a Sunday');
  });

  test('startOfMinute drops seconds and milliseconds', () => {
    assert.equal(startOfMinute(new Date('2026-02-13T10:17:59.999Z')).toISOString(), '2026-02-13T10:17:00.000Z');
  });
});

describe('refusals: 400 invalid_schedule', () => {
  const refused = [
    '',
    '   ',
    '* * * *',
    '* * * * * *',
    '60 * * * *',
    '* 24 * * *',
    '* * 0 * *',
    '* * 32 * *',
    '* * * 0 *',
    '* * * 13 *',
    '* * * * 8',
    '*/0 * * * *',
    '5-1 * * * *',
    'mon * * * *',
    '0 0 * * funday',
    '0 0 L * *',
    '0 0 15W * *',
    '0 0 * * 1#2',
    '0 0 ? * *',
    '@daily',
    '0 0 30 2 *',
    '0 0 31 4 *',
  ];
  for (const expression of refused) {
    test(JSON.stringify(expression), () => {
      assert.throws(
        () => parseSchedule(expression),
        (e: HearthError) => e.status === 400 && e.code === 'invalid_schedule',
      );
    });
  }
  test('not a string', () => {
    for (const value of [undefined, null, 5, ['* * * * *']]) {
      assert.throws(
        () => parseSchedule(value),
        (e: HearthError) => e.code === 'invalid_schedule',
      );
    }
  });
});
