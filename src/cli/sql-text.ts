/** Small helpers for SQL text the CLI sends through database/query. */

export { quoteLiteral as literal } from '../db/ident.ts';

/** The 1-based line of a 1-based character position (PostgreSQL counts characters, not bytes). */
export function lineOf(text: string, position: number): number {
  const before = Array.from(text)
    .slice(0, Math.max(0, position - 1))
    .join('');
  return before.split('\n').length;
}
