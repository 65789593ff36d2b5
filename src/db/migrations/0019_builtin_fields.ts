import { sql } from 'kysely';
import { notNull, type Migration } from './helpers.js';
import { KEY_LOOKUP_CHANNEL } from './0013_key_lookup_notify.js';

const BUILTIN_TABLES = ['leads', 'accounts', 'deals'] as const;

/**
 * Custom fields on leads, accounts and deals (contract §9), in a schema that does not grow with the fields:
 *
 * - `builtin_fields`: one definition per organization and resource (the custom-object field list, as JSON).
 * - `custom` on leads, accounts and deals: the item's values as one JSON object (e-mails and phones sealed in
 *   it one by one, bound to item and field, as records' are).
 * - `item_values`: the filterable values of those items (modules/fields/custom-values.ts), one row per set
 *   field, shared by the three resources like record_values is by objects: an equality or range on one field
 *   is one range of (organization, resource, field, value). Keyed by the item's id, which is known before its
 *   insert (the precompiled single insert and the import's multi-row inserts stay as they are).
 *
 * PostgreSQL: a definition change notifies the channel the key lookup cache listens on (migration 0013), so
 * every instance's definition cache (which uses the same change counter) drops it.
 */
export const builtinFields: Migration = {
  async up({ db, dialect }) {
    await db.schema
      .createTable('builtin_fields')
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('resource', 'text', notNull)
      .addColumn('definition', 'text', notNull)
      .addColumn('created_at', 'text', notNull)
      .addColumn('updated_at', 'text', notNull)
      .addPrimaryKeyConstraint('builtin_fields_pk', ['organization_id', 'resource'])
      .execute();
    for (const table of BUILTIN_TABLES) await db.schema.alterTable(table).addColumn('custom', 'text').execute();
    await db.schema
      .createTable('item_values')
      .addColumn('organization_id', 'text', notNull)
      .addColumn('resource', 'text', notNull)
      .addColumn('item_id', 'text', notNull)
      .addColumn('field_key', 'text', notNull)
      .addColumn('num_value', dialect === 'postgres' ? 'double precision' : 'real')
      .addColumn('text_value', 'text')
      .addPrimaryKeyConstraint('item_values_pk', ['item_id', 'field_key'])
      .execute();
    await db.schema.createIndex('item_values_number').on('item_values').columns(['organization_id', 'resource', 'field_key', 'num_value', 'item_id']).where(sql.ref('num_value'), 'is not', null).execute();
    await db.schema.createIndex('item_values_text').on('item_values').columns(['organization_id', 'resource', 'field_key', 'text_value', 'item_id']).where(sql.ref('text_value'), 'is not', null).execute();
    if (dialect === 'postgres') {
      await sql`create trigger builtin_fields_changed after insert or update or delete on builtin_fields
        for each statement execute function crm_key_lookup_changed()`.execute(db);
    }
  },
};
