import { sql } from 'kysely';
import { notNull, type Migration } from './helpers.js';

/**
 * Multi-select fields on leads, accounts and deals (contract §9): `item_values` gets a `position`, part of its
 * key (item, field, position), as record_values did in migration 0020, so a multi_select value is indexed as
 * one row per option and `filter[field]=<option>` stays one range of the text index. Every other field keeps
 * position 0, the column's default. SQLite cannot change a primary key in place: the table is rebuilt (create,
 * copy, drop, rename) with its two indexes.
 */
export const itemValuePositions: Migration = {
  async up({ db, dialect }) {
    if (dialect === 'postgres') {
      await sql`alter table item_values drop constraint item_values_pk`.execute(db);
      await db.schema.alterTable('item_values').addColumn('position', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await sql`alter table item_values add constraint item_values_pk primary key (item_id, field_key, position)`.execute(db);
      return;
    }
    await db.schema
      .createTable('item_values_next')
      .addColumn('organization_id', 'text', notNull)
      .addColumn('resource', 'text', notNull)
      .addColumn('item_id', 'text', notNull)
      .addColumn('field_key', 'text', notNull)
      .addColumn('position', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('num_value', 'real')
      .addColumn('text_value', 'text')
      .addPrimaryKeyConstraint('item_values_pk', ['item_id', 'field_key', 'position'])
      .execute();
    await sql`insert into item_values_next (organization_id, resource, item_id, field_key, num_value, text_value)
      select organization_id, resource, item_id, field_key, num_value, text_value from item_values`.execute(db);
    await db.schema.dropTable('item_values').execute();
    await sql`alter table item_values_next rename to item_values`.execute(db);
    await db.schema.createIndex('item_values_number').on('item_values').columns(['organization_id', 'resource', 'field_key', 'num_value', 'item_id']).where(sql.ref('num_value'), 'is not', null).execute();
    await db.schema.createIndex('item_values_text').on('item_values').columns(['organization_id', 'resource', 'field_key', 'text_value', 'item_id']).where(sql.ref('text_value'), 'is not', null).execute();
  },
};
