import { sql, type Expression, type SqlBool } from 'kysely';
import type { Dialect } from '../../config.js';
import type { Executor } from '../../db/database.js';
import type { RecordsTable } from '../../db/schema.js';
import { substringMatch } from '../../db/search.js';
import { cursorPagination, offsetOf, paginate } from '../../lib/pagination.js';
import type { ListRequest } from '../../lib/list-request.js';
import { afterPosition, columnSort, listScope, readPage, timeRangeConditions, TIME_AND_NAME, type ListPage, type SortKey } from '../../db/list-page.js';
import { jsonField } from '../../db/json-fields.js';
import { namesFewItems, type FieldFilter, type RecordSort } from './record-filters.js';
import { inView, type TrashView } from '../../db/trash.js';
import { guardExternalId } from '../shared/external-id.js';
import type { StoredValue } from './field-values.js';
import type { PreparedQuery } from './record-search.js';
import type { IndexedValue } from './record-values.js';
import { addRecordValues, replaceRecordValues } from './record-values.store.js';
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
/** A record to insert, with its filterable values (record-values.ts). */
export type NewRecord = Omit<StoredRecord, 'seq' | 'deletedAt'> & { values: IndexedValue[] };

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
const toRow = (r: Omit<StoredRecord, 'seq' | 'deletedAt'>): Omit<RecordsTable, 'seq' | 'deleted_at'> => ({
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
    const stored = chunk.map(({ values: _values, ...r }) => ({ ...r, seq: seqById.get(r.id)!, deletedAt: null }));
    await indexRecords(db, dialect, object.seq, stored);
    await addRecordValues(db, object.id, chunk.map((r) => ({ seq: seqById.get(r.id)!, values: r.values })));
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

/**
 * The live records of the object among `ids`, in one statement however many (a console page names the records
 * its rows point at). Looked up by id alone and checked against the object here, as names.store.ts does: given
 * the object as well, SQLite may walk the object's whole index instead of the unique id index.
 */
export async function findRecords(db: Executor, object: ObjectRef, ids: readonly string[]): Promise<StoredRecord[]> {
  if (ids.length === 0) return [];
  const rows = await db.selectFrom('records').selectAll().where('id', 'in', ids).where(inView('records', 'live')).execute();
  return rows.filter((r) => r.object_id === object.id && r.organization_id === object.organizationId).map(toStored);
}

/** Writes the record's new state; its search entry is replaced when its text or stage changed, its filterable values when given. */
export async function updateRecord(db: Executor, dialect: Dialect, object: ObjectRef, before: StoredRecord, next: StoredRecord, values?: readonly IndexedValue[]): Promise<void> {
  const { id: _id, organization_id: _org, object_id: _object, created_at: _created, ...changes } = toRow(next);
  await guardExternalId('record', () => db.updateTable('records').set(changes).where('object_id', '=', object.id).where('id', '=', next.id).execute());
  if (before.searchText !== next.searchText || before.stage !== next.stage) await reindexRecord(db, dialect, object.seq, next);
  if (values) await replaceRecordValues(db, object.id, next.seq, values);
}

export interface RecordFilter {
  query?: PreparedQuery;
  stage?: string;
  /** Only records whose due date is before this day (the overdue filter). */
  dueBefore?: string;
  externalId?: string;
  fields?: FieldFilter[];
}

const OPERATORS = { eq: '=', gte: '>=', lte: '<=', gt: '>', lt: '<' } as const;

/**
 * A field filter as a condition on records: the matching entries of the shared record_values index (one range
 * of (object, field, value, seq)), and for text equality the whole value in the record's data.
 */
function fieldCondition(dialect: Dialect, objectId: string, f: FieldFilter): Expression<SqlBool> {
  const column = sql.ref(`v.${f.column}`);
  const bounds = f.conditions.map((c) => sql`and ${column} ${sql.raw(OPERATORS[c.operator])} ${c.value}`);
  const whole = f.conditions.flatMap((c) => (c.fullText === undefined ? [] : [sql`and ${jsonField(dialect, 'records.data', f.field.key, 'text')} = ${c.fullText}`]));
  return sql<SqlBool>`(records.seq in (select v.record_seq from record_values v
    where v.object_id = ${objectId} and v.field_key = ${f.field.key} ${sql.join(bounds, sql` `)}) ${sql.join(whole, sql` `)})`;
}

/** The order of a records list: a column (createdAt, updatedAt, the trash's deletedAt) or a field of the data. */
function recordSortKey(dialect: Dialect, sort: RecordSort): { key: SortKey; positionOf: (r: Row) => { value: string | number | null; seq: number } } {
  if (sort.kind === 'column') {
    const column = TIME_AND_NAME[sort.sort.replace(/^-/, '')]!;
    return { key: columnSort('records', sort.sort, TIME_AND_NAME), positionOf: (r) => ({ value: (r as unknown as Record<string, string>)[column] ?? null, seq: Number(r.seq) }) };
  }
  const kind = sort.field.type === 'number' ? 'number' : 'text';
  const key: SortKey = { expr: jsonField(dialect, 'records.data', sort.field.key, kind), descending: sort.descending, seq: sql.ref('records.seq'), nullable: true, valueType: kind === 'number' ? 'number' : 'string' };
  return { key, positionOf: (r) => ({ value: (JSON.parse(r.data) as Record<string, string | number>)[sort.field.key] ?? null, seq: Number(r.seq) }) };
}

/**
 * A page of an object's records in the requested order (db/list-page.ts). A `q` on SQLite in the default
 * order goes through the shared FTS5 index (see record-search.store.ts), the pg_trgm index on PostgreSQL.
 * The object was resolved within the organization, so its id alone scopes the page and the count, which the
 * (object, key, seq) indexes then answer without reading the rows they skip; the rows of the page are
 * checked against the organization here instead.
 */
export async function listRecords(db: Executor, dialect: Dialect, object: ObjectRef, filter: RecordFilter, sort: RecordSort, request: ListRequest, view: TrashView = 'live'): Promise<ListPage<StoredRecord>> {
  const plain = !request.cursor && (filter.fields ?? []).length === 0 && Object.keys(request.range).length === 0 && request.sort === '-createdAt' && filter.externalId === undefined;
  if (dialect === 'sqlite' && filter.query && view === 'live' && plain) return searchSqlite(db, object, filter as RecordFilter & { query: PreparedQuery }, request);
  const byReference = (filter.fields ?? []).some(namesFewItems);
  let q = db.selectFrom('records').where(listScope(dialect, 'records.object_id', object.id, byReference)).where(inView('records', view));
  if (filter.stage !== undefined) q = q.where('records.stage', '=', filter.stage);
  if (filter.dueBefore !== undefined) q = q.where('records.due_date', '<', filter.dueBefore);
  if (filter.externalId !== undefined) q = q.where('records.external_id', '=', filter.externalId);
  if (filter.query) {
    const condition = await searchCondition(db, dialect, object, filter.query, filter.stage);
    if (condition === null) return { rows: [], pagination: request.cursor ? cursorPagination(request.limit, null) : paginate(request, 0) };
    q = q.where(condition);
  }
  for (const f of filter.fields ?? []) q = q.where(fieldCondition(dialect, object.id, f));
  for (const c of timeRangeConditions('records', request.range)) q = q.where(c);
  const { key, positionOf } = recordSortKey(dialect, sort);
  const page = await readPage<Row>(q, key, request, positionOf);
  return { rows: page.rows.filter((r) => r.organization_id === object.organizationId).map(toStored), pagination: page.pagination };
}

/** `q` as a condition on records: the shared FTS5 index on SQLite (null: nothing can match), pg_trgm on PostgreSQL. */
async function searchCondition(db: Executor, dialect: Dialect, object: ObjectRef, query: PreparedQuery, stage: string | undefined): Promise<Expression<SqlBool> | null> {
  if (dialect === 'postgres') return substringMatch(dialect, 'records', 'search_text', query.text);
  const match = await matchExpression(db, query, stage);
  if (match === null) return null;
  return sql<SqlBool>`records.seq in (select ${recordSeqOf(object.seq)} from ${sql.table(SEARCH_TABLE)}
    where ${sql.ref(`${SEARCH_TABLE}.${SEARCH_TABLE}`)} match ${match} and ${objectRange(object.seq)})`;
}

async function searchSqlite(db: Executor, object: ObjectRef, filter: RecordFilter & { query: PreparedQuery }, request: ListRequest): Promise<ListPage<StoredRecord>> {
  const result = await searchSqliteRows(db, object, filter, request);
  const last = result.records.at(-1);
  const cursor = last ? request.cursorAt({ value: last.createdAt, seq: last.seq }) : null;
  return { rows: result.records, pagination: paginate(request, result.total, cursor) };
}

async function searchSqliteRows(db: Executor, object: ObjectRef, filter: RecordFilter & { query: PreparedQuery }, page: ListRequest): Promise<{ records: StoredRecord[]; total: number }> {
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
