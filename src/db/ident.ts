/**
 * An SQL identifier, quoted: for the names statements cannot bind as
 * parameters (databases, roles, schemas, tables, columns, channels). Any text
 * is safe: a double quote inside is doubled, as PostgreSQL reads it.
 */
export const quoteIdent = (name: string): string => `"${name.replaceAll('"', '""')}"`;
