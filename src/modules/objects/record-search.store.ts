import { sql } from 'kysely';
import type { Dialect } from '../../config.js';
import type { Executor } from '../../db/database.js';
import { charsColumn, ftsMatch, objectColumn, stageColumn, type PreparedQuery, type SearchScope } from './record-search.js';

/*
 * Record search on SQLite: one contentless FTS5 trigram table for every object of every organization
 * (migration 0010), rowid = records.seq, columns
 *   search (the record's search_text), chars (its distinct characters), stage (its stage as one phrase),
 *   object (its object as one trigram, record-search.ts).
 * Why the object and stage inside the index: `total` must be exact and fast. Joining every match back to
 * `records` to check its object costs ~1 µs a row (100 ms at 100k matches); as one more term of the MATCH,
 * the FTS index alone answers the count and the newest-first page (read in descending rowid order and
 * stopped at the page end). Why one table: a table per object put five schema entries per object into
 * sqlite_master, which every connection re-parses after any schema change (issue 14: 0.24 s at 900 objects).
 * PostgreSQL uses one pg_trgm index on records.search_text (migration 0003) and needs nothing here.
 */

export const SEARCH_TABLE = 'record_search';
const VOCAB_TABLE = 'record_search_vocab';

export interface SearchRow {
  seq: number;
  searchText: string;
  stage: string | null;
}

const CHUNK = 300;

/** Indexes new records of one object (SQLite), in chunks of one statement each. */
export async function indexRecords(db: Executor, dialect: Dialect, objectSeq: number, rows: readonly SearchRow[]): Promise<void> {
  if (dialect !== 'sqlite' || rows.length === 0) return;
  const object = objectColumn(objectSeq);
  for (let i = 0; i < rows.length; i += CHUNK) {
    const values = rows.slice(i, i + CHUNK).map((r) => sql`(${r.seq}, ${r.searchText}, ${charsColumn(r.searchText)}, ${stageColumn(r.stage)}, ${object})`);
    await sql`insert into ${sql.table(SEARCH_TABLE)} (rowid, search, chars, stage, object) values ${sql.join(values)}`.execute(db);
  }
}

/** Replaces a record's index entry after its text or stage changed (SQLite). */
export async function reindexRecord(db: Executor, dialect: Dialect, objectSeq: number, row: SearchRow): Promise<void> {
  if (dialect !== 'sqlite') return;
  await sql`delete from ${sql.table(SEARCH_TABLE)} where rowid = ${row.seq}`.execute(db);
  await indexRecords(db, dialect, objectSeq, [row]);
}

/**
 * The FTS5 expression for a query within a scope, reading the vocabulary for two-character queries. The
 * vocabulary is shared by every object: a trigram only another object holds just matches nothing here.
 */
export async function matchExpression(db: Executor, query: PreparedQuery, scope: SearchScope): Promise<string | null> {
  if (query.length !== 2) return ftsMatch(query, scope);
  // Every string starting with the pair sorts between the pair and the pair followed by the last code point.
  const { rows } = await sql<{ term: string }>`select term from ${sql.table(VOCAB_TABLE)} where term >= ${query.text} and term < ${`${query.text}\u{10FFFF}`}`.execute(db);
  return ftsMatch(query, scope, rows.map((r) => r.term));
}
