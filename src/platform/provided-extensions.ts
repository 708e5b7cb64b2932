/**
 * Extensions a project has without the extension being installed. Queues are
 * the `pgmq` schema, written in plain SQL (migrations/project/040_pgmq.sql),
 * so PostgreSQL has no `pgmq` extension to create; yet every Supabase project
 * that uses Queues carries `create extension if not exists pgmq` (often
 * `with schema pgmq version '...'`) in its migrations. database/query (the
 * CLI's migrations, the Studio's SQL editor) turns such a statement into a
 * comment of the same length, so the rest runs and PostgreSQL's error
 * positions still point at the right line. A direct SQL connection gets
 * PostgreSQL's own "not available" error (docs/queues.md).
 */

// At the start of the text or of a statement (after `;`, white space and -- comments).
const CREATE_PGMQ =
  /((?:^|;)(?:\s|--[^\n]*\n)*)(create\s+extension\s+(?:if\s+not\s+exists\s+)?(?:"pgmq"|pgmq)(?![\w$"])[^;]*)/gi;

/** The query with each `create extension [if not exists] pgmq ...` statement commented out, offsets kept. */
export function skipProvidedExtensions(query: string): string {
  return query.replace(CREATE_PGMQ, (_match, before: string, statement: string) => {
    const end = statement.trimEnd();
    return `${before}/*${end.slice(2, -2)}*/${statement.slice(end.length)}`;
  });
}
