import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import type { Dialect } from '../config.js';
import type { Executor } from './database.js';

/** LIKE pattern for "contains `q`" with %, _ and \ in the query matched literally (ESCAPE '\'). */
export function containsPattern(q: string): string {
  return `%${q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** An FTS5 phrase: the query inside double quotes, quotes doubled, so no FTS syntax (NEAR, OR, *, ^) applies. */
export function ftsPhrase(q: string): string {
  return `"${q.replace(/"/g, '""')}"`;
}

/** The trigram index answers queries of three characters or more; shorter ones have no trigram to look up. */
export function usesFtsIndex(dialect: Dialect, q: string): boolean {
  return dialect === 'sqlite' && [...q].length >= 3;
}

/**
 * Case-insensitive "`column` contains `q`" as a WHERE condition, through the trigram index the migrations
 * built (createSubstringIndex): pg_trgm GIN on PostgreSQL (its planner falls back to a scan for 1–2
 * characters), FTS5 trigram on SQLite, and LIKE on SQLite for 1–2 characters.
 */
export function substringMatch(dialect: Dialect, table: string, column: string, q: string): Expression<SqlBool> {
  if (dialect === 'postgres') {
    return sql<SqlBool>`${sql.ref(`${table}.${column}`)} ilike ${containsPattern(q)}`;
  }
  if (!usesFtsIndex(dialect, q)) {
    return sql<SqlBool>`${sql.ref(`${table}.${column}`)} like ${containsPattern(q)} escape '\\'`;
  }
  return sql<SqlBool>`${sql.ref(`${table}.seq`)} in (select rowid from ${sql.table(`${table}_fts`)} where ${sql.table(`${table}_fts`)} match ${ftsPhrase(q)})`;
}

export interface FtsSearch {
  table: string;
  /** A narrow index whose leading columns are the scope conditions followed by `seq` (for the count). */
  scopeIndex: string;
  /** Conditions on alias `t` that scope the search (organization, object, stage…). */
  scope: RawBuilder<unknown>;
  q: string;
  limit: number;
  offset: number;
}

/**
 * SQLite FTS5 search shaped for speed at a million rows: the page walks the FTS index newest-first
 * (rowid = seq) and stops after `limit` scoped hits; the count checks each match against the narrow scope
 * index instead of the wide table rows. Both measured in bench/leads-search.ts.
 */
export async function sqliteFtsSearch<Row>(db: Executor, s: FtsSearch): Promise<{ rows: Row[]; total: number }> {
  const fts = sql.table(`${s.table}_fts`);
  const match = ftsPhrase(s.q);
  const page = await sql<Row>`select t.* from ${fts} f join ${sql.table(s.table)} t on t.seq = f.rowid
    where ${fts} match ${match} and ${s.scope} order by f.rowid desc limit ${s.limit} offset ${s.offset}`.execute(db);
  const count = await sql<{ n: number }>`select count(*) as n from ${fts} f
    join ${sql.table(s.table)} as t indexed by ${sql.raw(s.scopeIndex)} on t.seq = f.rowid
    where ${fts} match ${match} and ${s.scope}`.execute(db);
  return { rows: page.rows, total: Number(count.rows[0]?.n ?? 0) };
}
