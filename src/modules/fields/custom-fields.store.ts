import { sql, type Expression, type SqlBool } from 'kysely';
import type { Dialect } from '../../config.js';
import type { Executor } from '../../db/database.js';
import { jsonField } from '../../db/json-fields.js';
import type { Definition } from '../objects/definition.js';
import type { FieldFilter } from '../objects/record-filters.js';
import type { IndexedValue } from '../objects/record-values.js';
import type { BuiltinResource } from './builtin-resources.js';

/** The custom field definitions of leads, accounts and deals, and their filterable values (migration 0019). */

export interface StoredBuiltinDefinition {
  resource: BuiltinResource;
  definition: Definition;
  createdAt: string;
  updatedAt: string;
}

export async function builtinDefinitions(db: Executor, organizationId: string): Promise<StoredBuiltinDefinition[]> {
  const rows = await db.selectFrom('builtin_fields').selectAll().where('organization_id', '=', organizationId).execute();
  return rows.map((r) => ({ resource: r.resource as BuiltinResource, definition: JSON.parse(r.definition) as Definition, createdAt: r.created_at, updatedAt: r.updated_at }));
}

/** The definition row of one resource, locked (PostgreSQL) for a definition change. */
export async function lockBuiltinDefinition(db: Executor, dialect: Dialect, organizationId: string, resource: BuiltinResource): Promise<StoredBuiltinDefinition | undefined> {
  let q = db.selectFrom('builtin_fields').selectAll().where('organization_id', '=', organizationId).where('resource', '=', resource);
  if (dialect === 'postgres') q = q.forUpdate();
  const r = await q.executeTakeFirst();
  return r && { resource, definition: JSON.parse(r.definition) as Definition, createdAt: r.created_at, updatedAt: r.updated_at };
}

export async function saveBuiltinDefinition(db: Executor, organizationId: string, d: StoredBuiltinDefinition): Promise<void> {
  await db
    .insertInto('builtin_fields')
    .values({ organization_id: organizationId, resource: d.resource, definition: JSON.stringify(d.definition), created_at: d.createdAt, updated_at: d.updatedAt })
    .onConflict((oc) => oc.columns(['organization_id', 'resource']).doUpdateSet({ definition: JSON.stringify(d.definition), updated_at: d.updatedAt }))
    .execute();
}

const CHUNK = 300;

export async function addItemValues(db: Executor, organizationId: string, resource: BuiltinResource, entries: readonly { itemId: string; values: readonly IndexedValue[] }[]): Promise<void> {
  const rows = entries.flatMap((e) => e.values.map((v) => ({ organization_id: organizationId, resource, item_id: e.itemId, field_key: v.fieldKey, position: v.position, num_value: v.numValue, text_value: v.textValue })));
  for (let i = 0; i < rows.length; i += CHUNK) await db.insertInto('item_values').values(rows.slice(i, i + CHUNK)).execute();
}

export async function replaceItemValues(db: Executor, organizationId: string, resource: BuiltinResource, itemId: string, values: readonly IndexedValue[]): Promise<void> {
  await db.deleteFrom('item_values').where('item_id', '=', itemId).execute();
  await addItemValues(db, organizationId, resource, [{ itemId, values }]);
}

/** Removes the values of items removed for good (purge, erasure). */
export async function deleteItemValues(db: Executor, organizationId: string, itemIds: readonly string[]): Promise<void> {
  for (let i = 0; i < itemIds.length; i += CHUNK) {
    await db.deleteFrom('item_values').where('organization_id', '=', organizationId).where('item_id', 'in', itemIds.slice(i, i + CHUNK)).execute();
  }
}

const customValue = (dialect: Dialect, table: BuiltinResource, key: string) => jsonField(dialect, `${table}.custom`, key, 'text');

/** True when an item of the resource (live or trashed) has a value for the field. */
export async function customFieldHasData(db: Executor, dialect: Dialect, organizationId: string, resource: BuiltinResource, key: string): Promise<boolean> {
  const row = await db.selectFrom(resource).select(sql<number>`1`.as('one')).where('organization_id', '=', organizationId).where(customValue(dialect, resource, key), 'is not', null).limit(1).executeTakeFirst();
  return row !== undefined;
}

/** True when an item of the resource lacks a value for the field. */
export async function customFieldHasGaps(db: Executor, dialect: Dialect, organizationId: string, resource: BuiltinResource, key: string): Promise<boolean> {
  const row = await db.selectFrom(resource).select(sql<number>`1`.as('one')).where('organization_id', '=', organizationId).where(customValue(dialect, resource, key), 'is', null).limit(1).executeTakeFirst();
  return row !== undefined;
}

/**
 * The options among `options` that some item (live or trashed) holds in select or multi_select field `key`:
 * item_values has one row per option held.
 */
export async function customOptionsInUse(db: Executor, organizationId: string, resource: BuiltinResource, key: string, options: string[]): Promise<string[]> {
  const rows = await db
    .selectFrom('item_values')
    .select('text_value')
    .distinct()
    .where('organization_id', '=', organizationId)
    .where('resource', '=', resource)
    .where('field_key', '=', key)
    .where('text_value', 'in', options)
    .execute();
  return rows.map((r) => String(r.text_value));
}

const OPERATORS = { eq: '=', gte: '>=', lte: '<=', gt: '>', lt: '<' } as const;

/**
 * A custom field filter as a condition on a resource's list: the matching entries of item_values (one range
 * of (organization, resource, field, value)), and for text equality the whole value in the item's JSON.
 */
export function customFieldCondition(dialect: Dialect, resource: BuiltinResource, organizationId: string, f: FieldFilter): Expression<SqlBool> {
  const column = sql.ref(`v.${f.column}`);
  const bounds = f.conditions.map((c) => sql`and ${column} ${sql.raw(OPERATORS[c.operator])} ${c.value}`);
  const whole = f.conditions.flatMap((c) => (c.fullText === undefined ? [] : [sql`and ${customValue(dialect, resource, f.field.key)} = ${c.fullText}`]));
  // Matched by seq (the rowid on SQLite): the planner then reads the matching items by primary key, driven by
  // the index range, instead of walking the organization's items and probing the set (bench/custom-fields.ts).
  return sql<SqlBool>`(${sql.ref(`${resource}.seq`)} in (select i.seq from ${sql.table(resource)} i where i.id in (select v.item_id from item_values v
    where v.organization_id = ${organizationId} and v.resource = ${resource} and v.field_key = ${f.field.key} ${sql.join(bounds, sql` `)})) ${sql.join(whole, sql` `)})`;
}
