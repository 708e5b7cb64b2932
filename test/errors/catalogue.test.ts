/**
 * docs/errors.md and the error catalogue (src/error-catalogue.ts) say the same
 * thing: the "Every code, by area" section lists every code of the catalogue
 * once, with the same statuses, and no code the catalogue lacks; every other
 * table of the page that names a status and a code names a catalogue code
 * with one of its statuses, or a SQLSTATE relayed from the database.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { CATALOGUE, type CatalogueEntry } from '../../src/error-catalogue.ts';

const page = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
const catalogue = CATALOGUE as Record<string, CatalogueEntry>;
const statusesOf = (e: CatalogueEntry) => [e.status, ...Object.keys(e.otherStatuses ?? {}).map(Number)].sort();

interface Row {
  statuses: number[];
  codes: string[];
  line: string;
}

/** Table rows whose first cell is a status or statuses ("400", "415 / 400"), with the backquoted codes of the second. */
function rows(markdown: string): Row[] {
  const out: Row[] = [];
  for (const line of markdown.split('\n')) {
    const cells = line.split(/(?<!\\)\|/).map((c) => c.trim());
    if (cells.length < 4 || !/^\d{3}( \/ \d{3})*$/.test(cells[1]!)) continue;
    const codes = [...cells[2]!.matchAll(/`([A-Za-z0-9_]+)`/g)].map((m) => m[1]!);
    out.push({ statuses: cells[1]!.split(' / ').map(Number).sort(), codes, line });
  }
  return out;
}

const section = (() => {
  const start = page.indexOf('\n## Every code, by area\n');
  assert.ok(start >= 0, 'docs/errors.md has no "Every code, by area" section');
  const end = page.indexOf('\n## ', start + 1);
  return page.slice(start, end < 0 ? undefined : end);
})();

// A SQLSTATE relayed from the database as it is (42501, the queue functions' 22023...).
const SQLSTATE = /^[0-9A-Z]{5}$/;

describe('docs/errors.md follows the error catalogue', () => {
  test('the catalogue section lists every code once, with the statuses of the catalogue', () => {
    const listed = new Map<string, number[]>();
    for (const row of rows(section)) {
      assert.equal(row.codes.length, 1, `one code per row: ${row.line}`);
      const code = row.codes[0]!;
      assert.ok(!listed.has(code), `${code} is listed twice`);
      listed.set(code, row.statuses);
    }
    for (const [code, entry] of Object.entries(catalogue)) {
      assert.deepEqual(
        listed.get(code),
        statusesOf(entry),
        `docs/errors.md: ${code} should be listed with ${statusesOf(entry).join(' / ')}`,
      );
    }
    const unknown = [...listed.keys()].filter((code) => !(code in catalogue));
    assert.deepEqual(unknown, [], 'docs/errors.md lists codes the catalogue does not have');
  });

  test('every other table names catalogue codes with their statuses, or relayed SQLSTATEs', () => {
    const rest = page.replace(section, '');
    const checked = rows(rest);
    assert.ok(checked.length > 20, 'the SPEC tables are found');
    for (const row of checked) {
      for (const code of row.codes) {
        const entry = catalogue[code];
        if (!entry) {
          assert.match(code, SQLSTATE, `${code} is neither in the catalogue nor a SQLSTATE: ${row.line}`);
          continue;
        }
        for (const status of row.statuses) {
          assert.ok(statusesOf(entry).includes(status), `${code} is not answered with ${status}: ${row.line}`);
        }
      }
    }
  });

  test('a second status always says which upstream answers so, or which Hearth-only route', () => {
    for (const [code, entry] of Object.entries(catalogue)) {
      for (const [status, why] of Object.entries(entry.otherStatuses ?? {})) {
        assert.notEqual(Number(status), entry.status, code);
        assert.match(
          why,
          /^(GoTrue|PostgREST|Supabase Storage|Hearth-only route [A-Z]+ \/\S+): /,
          `${code} ${status}: the reason names the upstream or the Hearth-only route`,
        );
      }
    }
  });
});
