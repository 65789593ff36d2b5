import { sql, type Expression, type SqlBool } from 'kysely';
import type { Dialect } from '../config.js';

/** LIKE pattern for "contains `q`" with %, _ and \ in the query matched literally (ESCAPE '\'). */
export function containsPattern(q: string): string {
  return `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** An FTS5 phrase: the query inside double quotes, quotes doubled, so no FTS syntax (NEAR, OR, *, ^) applies. */
function ftsPhrase(q: string): string {
  return `"${q.replace(/"/g, '""')}"`;
}

/**
 * Case-insensitive "`column` contains `q`" on `table`, through the trigram index the migrations built
 * (createSubstringIndex): FTS5 trigram on SQLite, pg_trgm GIN on PostgreSQL. Queries shorter than three
 * characters have no trigram, so they fall back to LIKE (SQLite) — PostgreSQL's planner does that itself.
 */
export function substringMatch(dialect: Dialect, table: string, column: string, q: string): Expression<SqlBool> {
  if (dialect === 'postgres') {
    return sql<SqlBool>`${sql.ref(`${table}.${column}`)} ilike ${containsPattern(q)}`;
  }
  if ([...q].length < 3) {
    return sql<SqlBool>`${sql.ref(`${table}.${column}`)} like ${containsPattern(q)} escape '\\'`;
  }
  return sql<SqlBool>`${sql.ref(`${table}.seq`)} in (select rowid from ${sql.table(`${table}_fts`)} where ${sql.table(`${table}_fts`)} match ${ftsPhrase(q)})`;
}
