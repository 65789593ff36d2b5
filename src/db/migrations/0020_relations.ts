import { sql } from 'kysely';
import { notNull, type Migration } from './helpers.js';

/**
 * Relations and multi-select fields (contract §9).
 *
 * - `record_values` gets a `position`, part of its key (record, field, position): a multi_select value is
 *   indexed as one row per option, so `filter[field]=<option>` stays one range of the text index. Every
 *   other field keeps position 0, the column's default, so a release that does not know the column still
 *   writes its rows. SQLite cannot change a primary key in place: the table is rebuilt, as its docs describe
 *   (create, copy, drop, rename), with its two indexes.
 * - Reverse lookups on the built-ins, `GET /leads?accountId=`, `GET /deals?leadId=` and `GET /deals?accountId=`,
 *   read a (reference, seq) index over the rows that have one (an equality implies it, so the partial index
 *   serves the live list and the trash alike); ids are unique across organizations, so the organization is
 *   checked per row (db/list-page.ts, organizationScope).
 */
export const relations: Migration = {
  async up({ db, dialect }) {
    if (dialect === 'postgres') {
      await sql`alter table record_values drop constraint record_values_pk`.execute(db);
      await db.schema.alterTable('record_values').addColumn('position', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      await sql`alter table record_values add constraint record_values_pk primary key (record_seq, field_key, position)`.execute(db);
    } else {
      await db.schema
        .createTable('record_values_next')
        .addColumn('record_seq', 'integer', (c) => c.notNull().references('records.seq').onDelete('cascade'))
        .addColumn('object_id', 'text', notNull)
        .addColumn('field_key', 'text', notNull)
        .addColumn('position', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('num_value', 'real')
        .addColumn('text_value', 'text')
        .addPrimaryKeyConstraint('record_values_pk', ['record_seq', 'field_key', 'position'])
        .execute();
      await sql`insert into record_values_next (record_seq, object_id, field_key, num_value, text_value)
        select record_seq, object_id, field_key, num_value, text_value from record_values`.execute(db);
      await db.schema.dropTable('record_values').execute();
      await sql`alter table record_values_next rename to record_values`.execute(db);
      await db.schema.createIndex('record_values_number').on('record_values').columns(['object_id', 'field_key', 'num_value', 'record_seq']).where(sql.ref('num_value'), 'is not', null).execute();
      await db.schema.createIndex('record_values_text').on('record_values').columns(['object_id', 'field_key', 'text_value', 'record_seq']).where(sql.ref('text_value'), 'is not', null).execute();
    }
    for (const [table, column] of [['leads', 'account_id'], ['deals', 'lead_id'], ['deals', 'account_id']] as const) {
      await db.schema.createIndex(`${table}_${column}_seq`).on(table).columns([column, 'seq']).where(sql.ref(column), 'is not', null).execute();
    }
  },
};
