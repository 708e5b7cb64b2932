/** Small helpers for SQL text the CLI sends through database/query. */

/**
 * A string as an SQL literal. The E'' form with backslashes doubled reads the
 * same whatever standard_conforming_strings the project's role has set.
 */
export function literal(value: string): string {
  return `E'${value.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

/** The 1-based line of a 1-based character position (PostgreSQL counts characters, not bytes). */
export function lineOf(text: string, position: number): number {
  const before = Array.from(text).slice(0, Math.max(0, position - 1)).join('');
  return before.split('\n').length;
}
