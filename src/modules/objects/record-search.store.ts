import { sql } from 'kysely';
import type { Dialect } from '../../config.js';
import type { Executor } from '../../db/database.js';
import { charsColumn, ftsMatch, stageColumn, type PreparedQuery } from './record-search.js';

/*
 * Record search on SQLite: one contentless FTS5 trigram table per custom object, columns
 *   search (the record's search_text), chars (its distinct characters), stage (its stage as one phrase).
 * Why per object, with the stage inside: `total` must be exact and fast. With one shared table, counting the
 * matches of a common substring means joining every matching row back to `records` to check its object and
 * stage (~1 µs a row: 100 ms at 100k matches). Here the FTS index alone answers the count and the newest-first
 * page (rowid = records.seq, read in descending order and stopped at the page end).
 * PostgreSQL uses one pg_trgm index on records.search_text (migration 0003) and needs nothing here.
 */

export const searchTable = (objectSeq: number): string => `records_fts_${Math.trunc(objectSeq)}`;

export async function createRecordSearchIndex(db: Executor, dialect: Dialect, objectSeq: number): Promise<void> {
  if (dialect !== 'sqlite') return;
  const table = searchTable(objectSeq);
  await sql.raw(`create virtual table ${table} using fts5(search, chars, stage, content='', contentless_delete=1, tokenize='trigram')`).execute(db);
  // Lists the indexed trigrams: a two-character query becomes "any trigram starting with these two".
  await sql.raw(`create virtual table ${table}_vocab using fts5vocab(${table}, 'row')`).execute(db);
}

export interface SearchRow {
  seq: number;
  searchText: string;
  stage: string | null;
}

const CHUNK = 300;

/** Indexes new records (SQLite), in chunks of one statement each. */
export async function indexRecords(db: Executor, dialect: Dialect, objectSeq: number, rows: readonly SearchRow[]): Promise<void> {
  if (dialect !== 'sqlite' || rows.length === 0) return;
  const table = sql.table(searchTable(objectSeq));
  for (let i = 0; i < rows.length; i += CHUNK) {
    const values = rows.slice(i, i + CHUNK).map((r) => sql`(${r.seq}, ${r.searchText}, ${charsColumn(r.searchText)}, ${stageColumn(r.stage)})`);
    await sql`insert into ${table} (rowid, search, chars, stage) values ${sql.join(values)}`.execute(db);
  }
}

/** Removes the index entries of records removed for good (SQLite). */
export async function unindexRecords(db: Executor, dialect: Dialect, objectSeq: number, seqs: readonly number[]): Promise<void> {
  if (dialect !== 'sqlite' || seqs.length === 0) return;
  await sql`delete from ${sql.table(searchTable(objectSeq))} where rowid in (${sql.join(seqs)})`.execute(db);
}

/** Replaces a record's index entry after its text or stage changed (SQLite). */
export async function reindexRecord(db: Executor, dialect: Dialect, objectSeq: number, row: SearchRow): Promise<void> {
  if (dialect !== 'sqlite') return;
  await sql`delete from ${sql.table(searchTable(objectSeq))} where rowid = ${row.seq}`.execute(db);
  await indexRecords(db, dialect, objectSeq, [row]);
}

/** The FTS5 expression for a query on one object's table, reading the vocabulary for two-character queries. */
export async function matchExpression(db: Executor, objectSeq: number, query: PreparedQuery, stage: string | undefined): Promise<string | null> {
  if (query.length !== 2) return ftsMatch(query, stage);
  const vocab = sql.table(`${searchTable(objectSeq)}_vocab`);
  // Every string starting with the pair sorts between the pair and the pair followed by the last code point.
  const { rows } = await sql<{ term: string }>`select term from ${vocab} where term >= ${query.text} and term < ${`${query.text}\u{10FFFF}`}`.execute(db);
  return ftsMatch(query, stage, rows.map((r) => r.term));
}
