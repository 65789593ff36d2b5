import { sql } from 'kysely';
import type { Dialect } from '../../config.js';
import type { Executor } from '../../db/database.js';
import type { RecordsTable } from '../../db/schema.js';
import { substringMatch } from '../../db/search.js';
import { offsetOf, type PageRequest } from '../../lib/pagination.js';
import { inView, listOrder, type TrashView } from '../../db/trash.js';
import { guardExternalId } from '../shared/external-id.js';
import type { StoredValue } from './field-values.js';
import type { PreparedQuery } from './record-search.js';
import { indexRecords, matchExpression, objectRange, recordSeqOf, reindexRecord, SEARCH_TABLE } from './record-search.store.js';

/** A record as stored: values in stored form, e-mails and phones encrypted. */
export interface StoredRecord {
  seq: number;
  id: string;
  organizationId: string;
  objectId: string;
  stage: string | null;
  data: Record<string, StoredValue>;
  searchText: string;
  dueDate: string | null;
  externalId: string | null;
  createdAt: string;
  updatedAt: string;
  deletedAt: string | null;
}

/** What the store needs to know of the record's object: its id and the seq keying it in SQLite's search index. */
export interface ObjectRef {
  id: string;
  seq: number;
  organizationId: string;
}

type Row = Omit<RecordsTable, 'seq' | 'deleted_at'> & { seq: number; deleted_at: string | null };
export type NewRecord = Omit<StoredRecord, 'seq' | 'deletedAt'>;

/** A records row in stored form (also used by the privacy export, which reads rows by blind index). */
export const toStored = (r: Row): StoredRecord => ({
  seq: Number(r.seq),
  id: r.id,
  organizationId: r.organization_id,
  objectId: r.object_id,
  stage: r.stage,
  data: JSON.parse(r.data) as Record<string, StoredValue>,
  searchText: r.search_text,
  dueDate: r.due_date,
  externalId: r.external_id,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  deletedAt: r.deleted_at,
});

/** The written columns: `deleted_at` only ever changes through db/trash.ts. */
const toRow = (r: NewRecord): Omit<RecordsTable, 'seq' | 'deleted_at'> => ({
  id: r.id,
  organization_id: r.organizationId,
  object_id: r.objectId,
  stage: r.stage,
  data: JSON.stringify(r.data),
  search_text: r.searchText,
  due_date: r.dueDate,
  external_id: r.externalId,
  created_at: r.createdAt,
  updated_at: r.updatedAt,
});

const CHUNK = 200;

/** Inserts records of one object (one statement per chunk) and indexes them for search; returns them with their seq. */
export async function insertRecords(db: Executor, dialect: Dialect, object: ObjectRef, records: readonly NewRecord[]): Promise<StoredRecord[]> {
  const out: StoredRecord[] = [];
  for (let i = 0; i < records.length; i += CHUNK) {
    const chunk = records.slice(i, i + CHUNK);
    const rows = await guardExternalId('record', () => db.insertInto('records').values(chunk.map(toRow)).returning(['id', 'seq']).execute());
    const seqById = new Map(rows.map((r) => [r.id, Number(r.seq)]));
    const stored = chunk.map((r) => ({ ...r, seq: seqById.get(r.id)!, deletedAt: null }));
    await indexRecords(db, dialect, object.seq, stored);
    out.push(...stored);
  }
  return out;
}

/** One record of the object; a live one unless `view` says otherwise. */
export async function findRecord(db: Executor, object: ObjectRef, id: string, view: TrashView = 'live'): Promise<StoredRecord | undefined> {
  const row = await db
    .selectFrom('records')
    .selectAll()
    .where('organization_id', '=', object.organizationId)
    .where('object_id', '=', object.id)
    .where('id', '=', id)
    .where(inView('records', view))
    .executeTakeFirst();
  return row && toStored(row);
}

/** Writes the record's new state; its search entry is replaced when its text or stage changed. */
export async function updateRecord(db: Executor, dialect: Dialect, object: ObjectRef, before: StoredRecord, next: StoredRecord): Promise<void> {
  const { id: _id, organization_id: _org, object_id: _object, created_at: _created, ...changes } = toRow(next);
  await guardExternalId('record', () => db.updateTable('records').set(changes).where('object_id', '=', object.id).where('id', '=', next.id).execute());
  if (before.searchText !== next.searchText || before.stage !== next.stage) await reindexRecord(db, dialect, object.seq, next);
}

export interface RecordFilter {
  query?: PreparedQuery;
  stage?: string;
  /** Only records whose due date is before this day (the overdue filter). */
  dueBefore?: string;
  externalId?: string;
}

export interface RecordPage {
  records: StoredRecord[];
  total: number;
}

/**
 * A page of an object's records, newest first, with the exact total of the filter. A query goes through the
 * shared FTS5 index on SQLite (see record-search.store.ts) and the pg_trgm index on PostgreSQL; without
 * one, the (object, stage, seq) index serves both the order and the count.
 */
export async function listRecords(db: Executor, dialect: Dialect, object: ObjectRef, filter: RecordFilter, page: PageRequest, view: TrashView = 'live'): Promise<RecordPage> {
  if (dialect === 'sqlite' && filter.query && view === 'live' && filter.externalId === undefined) return searchSqlite(db, object, filter as RecordFilter & { query: PreparedQuery }, page);
  // The object was resolved within the organization, so its id alone scopes the count and the page, which
  // the (object, stage, seq) and (object, due) indexes then answer without reading the rows they skip (a
  // condition on organization_id in SQL would read every skipped row: 32 ms instead of 4 for the last page
  // of 100,000 on SQLite). The rows of the page are checked against the organization here instead.
  let q = db.selectFrom('records').where('records.object_id', '=', object.id).where(inView('records', view));
  if (filter.stage !== undefined) q = q.where('records.stage', '=', filter.stage);
  if (filter.dueBefore !== undefined) q = q.where('records.due_date', '<', filter.dueBefore);
  if (filter.externalId !== undefined) q = q.where('records.external_id', '=', filter.externalId);
  if (filter.query) q = q.where(substringMatch(dialect, 'records', 'search_text', filter.query.text));
  const [rows, count] = await Promise.all([
    q.selectAll().orderBy(listOrder('records', view)).limit(page.limit).offset(offsetOf(page)).execute(),
    q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { records: rows.filter((r) => r.organization_id === object.organizationId).map(toStored), total: Number(count.n) };
}

async function searchSqlite(db: Executor, object: ObjectRef, filter: RecordFilter & { query: PreparedQuery }, page: PageRequest): Promise<RecordPage> {
  const match = await matchExpression(db, filter.query, filter.stage);
  if (match === null) return { records: [], total: 0 };
  const fts = sql.table(SEARCH_TABLE);
  const matches = sql`${sql.ref(`${SEARCH_TABLE}.${SEARCH_TABLE}`)} match ${match} and ${objectRange(object.seq)}`;
  const joinRecords = sql`join records on records.seq = ${recordSeqOf(object.seq)}`;
  const due = filter.dueBefore === undefined ? sql`` : sql`and records.due_date < ${filter.dueBefore}`;
  const { rows } = await sql<Row>`
    select records.* from ${fts} ${joinRecords}
    where ${matches} and records.organization_id = ${object.organizationId} and records.object_id = ${object.id} and ${inView('records', 'live')} ${due}
    order by ${sql.ref(`${SEARCH_TABLE}.rowid`)} desc limit ${page.limit} offset ${offsetOf(page)}`.execute(db);
  // The object's rowid range holds its records only, so without the due-date filter the index alone counts all
  // matches, and the trashed ones among them come off through the (small) trash index.
  if (filter.dueBefore !== undefined) {
    const count = await sql<{ n: number }>`select count(*) as n from ${fts} ${joinRecords} where ${matches} and ${inView('records', 'live')} ${due}`.execute(db);
    return { records: rows.map(toStored), total: Number(count.rows[0]?.n ?? 0) };
  }
  const all = await sql<{ n: number }>`select count(*) as n from ${fts} where ${matches}`.execute(db);
  const trashed = await sql<{ n: number }>`select count(*) as n from records where records.object_id = ${object.id} and ${inView('records', 'trash')}
    and records.seq in (select ${recordSeqOf(object.seq)} from ${fts} where ${matches})`.execute(db);
  return { records: rows.map(toStored), total: Number(all.rows[0]?.n ?? 0) - Number(trashed.rows[0]?.n ?? 0) };
}
