import { sql, type RawBuilder } from 'kysely';
import type { Dialect } from '../../config.js';
import type { Executor } from '../../db/database.js';
import { charsColumn, ftsMatch, stageColumn, type PreparedQuery } from './record-search.js';

/*
 * Record search on SQLite: one contentless FTS5 trigram table for the records of every object of every
 * organization (migration 0010), columns
 *   search (the record's search_text), chars (its distinct characters), stage (its stage as one phrase),
 * and rowid = (object seq << 36) + record seq: each object's records are one contiguous rowid range, newest
 * last. Why the object in the rowid and the stage inside: `total` must be exact and fast. FTS5 seeks every
 * doclist to the start of a rowid range and stops at its end, so a query on one object reads that object's
 * part of the index only, and the index alone answers the count and the newest-first page (read in
 * descending rowid order, stopped at the page end); joining each match back to `records` to check its object
 * would cost ~1 µs a row (100 ms at 100k matches). Why one table: a table per object put six schema entries
 * per object into sqlite_master, which every connection re-parses after any schema change (issue 14: 0.24 s
 * at 900 objects). Record seqs stay below 2^36 and object seqs below 2^27 within SQLite's 64-bit rowid.
 * PostgreSQL uses one pg_trgm index on records.search_text (migration 0003) and needs nothing here.
 */

export const SEARCH_TABLE = 'record_search';
const VOCAB_TABLE = 'record_search_vocab';

/** The first rowid of an object's range, computed by SQLite in 64-bit integers. */
const rangeStart = (objectSeq: number): RawBuilder<number> => sql<number>`(${objectSeq} << 36)`;

/** The search rowid of a record, as SQL. */
export const searchRowid = (objectSeq: number, recordSeq: number): RawBuilder<number> => sql<number>`(${rangeStart(objectSeq)} + ${recordSeq})`;

/** Conditions on `rowid` (of the table or its alias `ref`) keeping one object's range. */
export function objectRange(objectSeq: number, ref: string = SEARCH_TABLE): RawBuilder<boolean> {
  const rowid = sql.ref(`${ref}.rowid`);
  return sql<boolean>`${rowid} >= ${rangeStart(objectSeq)} and ${rowid} < ${rangeStart(objectSeq + 1)}`;
}

/** The record seq of a search rowid, as SQL (for the join back to `records`). */
export const recordSeqOf = (objectSeq: number, ref: string = SEARCH_TABLE): RawBuilder<number> => sql<number>`(${sql.ref(`${ref}.rowid`)} - ${rangeStart(objectSeq)})`;

export interface SearchRow {
  seq: number;
  searchText: string;
  stage: string | null;
}

const CHUNK = 300;

/** Indexes new records of one object (SQLite), in chunks of one statement each. */
export async function indexRecords(db: Executor, dialect: Dialect, objectSeq: number, rows: readonly SearchRow[]): Promise<void> {
  if (dialect !== 'sqlite' || rows.length === 0) return;
  for (let i = 0; i < rows.length; i += CHUNK) {
    const values = rows.slice(i, i + CHUNK).map((r) => sql`(${searchRowid(objectSeq, r.seq)}, ${r.searchText}, ${charsColumn(r.searchText)}, ${stageColumn(r.stage)})`);
    await sql`insert into ${sql.table(SEARCH_TABLE)} (rowid, search, chars, stage) values ${sql.join(values)}`.execute(db);
  }
}

/** Replaces a record's index entry after its text or stage changed (SQLite). */
export async function reindexRecord(db: Executor, dialect: Dialect, objectSeq: number, row: SearchRow): Promise<void> {
  if (dialect !== 'sqlite') return;
  await sql`delete from ${sql.table(SEARCH_TABLE)} where rowid = ${searchRowid(objectSeq, row.seq)}`.execute(db);
  await indexRecords(db, dialect, objectSeq, [row]);
}

/** Removes records' index entries for good (SQLite; a purge or an erasure): contentless_delete drops their trigrams. */
export async function unindexRecords(db: Executor, dialect: Dialect, objectSeq: number, seqs: readonly number[]): Promise<void> {
  if (dialect !== 'sqlite') return;
  for (let i = 0; i < seqs.length; i += CHUNK) {
    const rowids = seqs.slice(i, i + CHUNK).map((seq) => searchRowid(objectSeq, seq));
    await sql`delete from ${sql.table(SEARCH_TABLE)} where rowid in (${sql.join(rowids)})`.execute(db);
  }
}

/**
 * The FTS5 expression for a query and an optional stage, reading the vocabulary for two-character queries.
 * The vocabulary is shared by every object: a trigram only other objects hold just matches nothing here.
 */
export async function matchExpression(db: Executor, query: PreparedQuery, stage: string | undefined): Promise<string | null> {
  if (query.length !== 2) return ftsMatch(query, stage);
  // Every string starting with the pair sorts between the pair and the pair followed by the last code point.
  const { rows } = await sql<{ term: string }>`select term from ${sql.table(VOCAB_TABLE)} where term >= ${query.text} and term < ${`${query.text}\u{10FFFF}`}`.execute(db);
  return ftsMatch(query, stage, rows.map((r) => r.term));
}
