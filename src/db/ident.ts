/**
 * Quoting for SQL text: the one place Hearth (the Studio bundle and the CLI
 * included) turns a name or a string into SQL. Bind values as parameters
 * whenever a statement can take them; these are for what it cannot.
 */

/**
 * An SQL identifier, quoted: for the names statements cannot bind as
 * parameters (databases, roles, schemas, tables, columns, channels). Any text
 * is safe: a double quote inside is doubled, as PostgreSQL reads it.
 */
export const quoteIdent = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/**
 * A string as an SQL literal, for SQL sent as text (trigger arguments, the
 * CLI's and the Studio's statements through database/query). The E'' form
 * with backslashes doubled reads the same whatever standard_conforming_strings
 * the session has set.
 */
export const quoteLiteral = (value: string): string => `E'${value.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
