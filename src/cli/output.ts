/**
 * How the CLI talks to people and scripts: one-line errors (exit 1), usage
 * errors (exit 2), tables or JSON, and a progress line on stderr while long
 * work runs (only on a terminal, so scripts read clean output).
 */

/** A failure the user can act on: printed as one line, exit status 1, no stack. */
export class CliError extends Error {}

/** A command line that does not parse: printed with the command's usage, exit status 2. */
export class UsageError extends Error {}

export type Output = 'table' | 'json' | 'env';

/** Rows as an aligned text table with a header line; `(none)` when empty. */
export function table(items: object[], columns: string[]): string {
  if (items.length === 0) return '(none)';
  const rows = items as Record<string, unknown>[];
  const cell = (v: unknown) =>
    v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.toUpperCase())), ...rows.map((r) => line(columns.map((c) => cell(r[c]))))].join(
    '\n',
  );
}

export function print(rows: object[], columns: string[], output: Output): void {
  console.log(output === 'json' ? JSON.stringify(rows, null, 2) : table(rows, columns));
}

/** Progress on stderr, rewritten in place on a terminal; silent otherwise. */
export function progress(text: string): void {
  if (!process.stderr.isTTY) return;
  process.stderr.write(`\r\x1b[2K${text}`);
}

export function progressDone(): void {
  if (process.stderr.isTTY) process.stderr.write('\r\x1b[2K');
}
