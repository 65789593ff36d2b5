import { sql } from 'kysely';
import type { Dialect } from '../../config.js';
import type { Executor } from '../../db/database.js';
import type { CustomObjectsTable } from '../../db/schema.js';
import type { ListRequest } from '../../lib/list-request.js';
import { CREATION_ORDER, readColumnPage, timeRangeConditions, type ListPage, type PositionOf } from '../../db/list-page.js';
import type { Definition } from './definition.js';

/** A custom object as stored; `seq` also keys its records in SQLite's search index. */
export interface StoredObject {
  seq: number;
  id: string;
  organizationId: string;
  slug: string;
  name: string;
  definition: Definition;
  createdAt: string;
  updatedAt: string;
}

type Row = Omit<CustomObjectsTable, 'seq'> & { seq: number };

const toStored = (r: Row): StoredObject => ({
  seq: Number(r.seq),
  id: r.id,
  organizationId: r.organization_id,
  slug: r.slug,
  name: r.name,
  definition: JSON.parse(r.definition) as Definition,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

/** Inserts the object in the caller's transaction; no schema change (its records share one search index). */
export async function insertObject(db: Executor, o: Omit<StoredObject, 'seq'>): Promise<StoredObject> {
  const { seq } = await db
    .insertInto('custom_objects')
    .values({
      id: o.id,
      organization_id: o.organizationId,
      slug: o.slug,
      name: o.name,
      definition: JSON.stringify(o.definition),
      created_at: o.createdAt,
      updated_at: o.updatedAt,
    })
    .returning('seq')
    .executeTakeFirstOrThrow();
  return { ...o, seq: Number(seq) };
}

/**
 * The object `slug` of the organization. `lock` (PostgreSQL): 'share' for record writes, 'update' for a
 * definition change, so a record can't be written against a definition that is being changed under it.
 * SQLite needs none: its write transactions are serialized.
 */
export async function findObject(db: Executor, dialect: Dialect, organizationId: string, slug: string, lock?: 'share' | 'update'): Promise<StoredObject | undefined> {
  let q = db.selectFrom('custom_objects').selectAll().where('organization_id', '=', organizationId).where('slug', '=', slug);
  if (dialect === 'postgres' && lock === 'share') q = q.forShare();
  if (dialect === 'postgres' && lock === 'update') q = q.forUpdate();
  const row = await q.executeTakeFirst();
  return row && toStored(row);
}

export async function findObjectById(db: Executor, id: string): Promise<StoredObject | undefined> {
  const row = await db.selectFrom('custom_objects').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toStored(row);
}

/**
 * How many objects the organization has, for its limit. PostgreSQL: the organization's row is locked first
 * (NO KEY UPDATE: writes referencing the organization don't wait for it), so two creates at once count one
 * after the other instead of both passing at the limit. SQLite's write transactions are serialized already.
 */
export async function countObjects(db: Executor, dialect: Dialect, organizationId: string): Promise<number> {
  if (dialect === 'postgres') await db.selectFrom('organizations').select('id').where('id', '=', organizationId).forNoKeyUpdate().execute();
  const { n } = await db.selectFrom('custom_objects').select((eb) => eb.fn.countAll<number>().as('n')).where('organization_id', '=', organizationId).executeTakeFirstOrThrow();
  return Number(n);
}

/** Every object of the organization, newest first (for the per-organization OpenAPI document). */
export async function allObjects(db: Executor, organizationId: string): Promise<StoredObject[]> {
  const rows = await db.selectFrom('custom_objects').selectAll().where('organization_id', '=', organizationId).orderBy('seq', 'desc').execute();
  return rows.map(toStored);
}

/**
 * The sorts of GET /objects and their columns: creation order is `seq` (as before sorts came, so older cursors
 * stay valid). An organization has at most MAX_OBJECTS_PER_ORG of them, sorted once the (organization, seq)
 * index has found them: no index per sort.
 */
const OBJECT_SORTS: Record<string, string> = { ...CREATION_ORDER, updatedAt: 'updated_at', name: 'name' };
const SORT_VALUES: Record<string, (o: StoredObject) => string | number> = { createdAt: (o) => o.seq, updatedAt: (o) => o.updatedAt, name: (o) => o.name };

/** An object's position in its list in `sort`, as the list's cursors name it: its sort value and its seq. */
export const objectPosition = (sort: string): PositionOf<StoredObject> => {
  const value = SORT_VALUES[sort.replace(/^-/, '')]!;
  return (o) => ({ value: value(o), seq: o.seq });
};

/** A page of the organization's objects in the request's sort (db/list-page.ts). */
export async function listObjects(db: Executor, organizationId: string, request: ListRequest): Promise<ListPage<StoredObject>> {
  let q = db.selectFrom('custom_objects').where('custom_objects.organization_id', '=', organizationId);
  for (const c of timeRangeConditions('custom_objects', request.range)) q = q.where(c);
  const page = await readColumnPage<CustomObjectsTable & { seq: number }>(q, 'custom_objects', request, OBJECT_SORTS);
  return { rows: page.rows.map(toStored), pagination: page.pagination };
}

export async function updateObject(db: Executor, o: StoredObject): Promise<void> {
  await db
    .updateTable('custom_objects')
    .set({ name: o.name, definition: JSON.stringify(o.definition), updated_at: o.updatedAt })
    .where('id', '=', o.id)
    .execute();
}

/** The stored value of field `key` in a record's data JSON, as SQL (keys match FIELD_KEY_PATTERN: letters, digits and _, safe in a JSON path). */
function fieldValue(dialect: Dialect, key: string) {
  return dialect === 'postgres' ? sql<string | null>`(records.data::jsonb ->> ${key})` : sql<string | null>`json_extract(records.data, ${`$.${key}`})`;
}

const anyRecord = (db: Executor, objectId: string) => db.selectFrom('records').select(sql<number>`1`.as('one')).where('records.object_id', '=', objectId).limit(1);

/** True when at least one record of the object has a value for the field. */
export async function fieldHasData(db: Executor, dialect: Dialect, objectId: string, key: string): Promise<boolean> {
  return (await anyRecord(db, objectId).where(fieldValue(dialect, key), 'is not', null).executeTakeFirst()) !== undefined;
}

/** True when at least one record of the object lacks a value for the field. */
export async function fieldHasGaps(db: Executor, dialect: Dialect, objectId: string, key: string): Promise<boolean> {
  return (await anyRecord(db, objectId).where(fieldValue(dialect, key), 'is', null).executeTakeFirst()) !== undefined;
}

/**
 * The options among `options` that some record of the object (trash included) holds in select or
 * multi_select field `key`: read from the filter index, where a multi_select has one row per option.
 */
export async function optionsInUse(db: Executor, objectId: string, key: string, options: string[]): Promise<string[]> {
  const rows = await db
    .selectFrom('record_values')
    .select('text_value')
    .distinct()
    .where('object_id', '=', objectId)
    .where('field_key', '=', key)
    .where('text_value', 'in', options)
    .execute();
  return rows.map((r) => String(r.text_value));
}

export async function stageInUse(db: Executor, objectId: string, stage: string): Promise<boolean> {
  return (await anyRecord(db, objectId).where('records.stage', '=', stage).executeTakeFirst()) !== undefined;
}

/** The search-table seq and slug of each of the given objects (purged records' index entries and events). */
export async function objectsByIds(db: Executor, ids: readonly string[]): Promise<Map<string, { seq: number; slug: string }>> {
  if (ids.length === 0) return new Map();
  const rows = await db.selectFrom('custom_objects').select(['id', 'seq', 'slug']).where('id', 'in', [...ids]).execute();
  return new Map(rows.map((r) => [r.id, { seq: Number(r.seq), slug: r.slug }]));
}
