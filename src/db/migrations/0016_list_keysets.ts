import { sql, type Kysely } from 'kysely';
import type { Definition } from '../../modules/objects/definition.js';
import { indexedValues } from '../../modules/objects/record-values.js';
import { notNull, type Migration } from './helpers.js';

/** Per list table, the scope of its lists and the sort keys (besides seq) a cursor page walks. */
const SORT_INDEXES: Record<string, { scope: string; keys: string[] }> = {
  leads: { scope: 'organization_id', keys: ['created_at', 'updated_at', 'name'] },
  accounts: { scope: 'organization_id', keys: ['created_at', 'updated_at', 'name'] },
  deals: { scope: 'organization_id', keys: ['created_at', 'updated_at', 'name'] },
  records: { scope: 'object_id', keys: ['created_at', 'updated_at'] },
};

const BATCH = 1000;

/**
 * Cursor pagination, sort and filters on every list (contract §8).
 *
 * - A partial index over live rows on (scope, sort key, seq) per sort: a cursor page is then one index range
 *   from the cursor's position, whatever its depth, and the default order (-createdAt) is read from it too.
 * - `record_values`: the filterable values of records, one row per (record, field), for every object in one
 *   table (see modules/objects/record-values.ts). Rows go with their record (on delete cascade: purge,
 *   erasure). Existing records are copied here; their e-mail and phone values need the blind-index key, which
 *   a migration does not hold, so those are indexed as records are next written (docs/sync.md).
 */
export const listKeysets: Migration = {
  async up({ db, dialect }) {
    for (const [table, { scope, keys }] of Object.entries(SORT_INDEXES)) {
      for (const key of keys) {
        const name = `${table}_live_${scope.replace(/_id$/, '')}_${key}_seq`;
        await db.schema.createIndex(name).on(table).columns([scope, key, 'seq']).where(sql.ref('deleted_at'), 'is', null).execute();
      }
    }
    await db.schema
      .createTable('record_values')
      .addColumn('record_seq', dialect === 'postgres' ? 'bigint' : 'integer', (c) => c.notNull().references('records.seq').onDelete('cascade'))
      .addColumn('object_id', 'text', notNull)
      .addColumn('field_key', 'text', notNull)
      .addColumn('num_value', dialect === 'postgres' ? 'double precision' : 'real')
      .addColumn('text_value', 'text')
      .addPrimaryKeyConstraint('record_values_pk', ['record_seq', 'field_key'])
      .execute();
    await db.schema.createIndex('record_values_number').on('record_values').columns(['object_id', 'field_key', 'num_value', 'record_seq']).where(sql.ref('num_value'), 'is not', null).execute();
    await db.schema.createIndex('record_values_text').on('record_values').columns(['object_id', 'field_key', 'text_value', 'record_seq']).where(sql.ref('text_value'), 'is not', null).execute();
    await copyValues(db);
  },
};

async function copyValues(db: Kysely<any>): Promise<void> {
  const objects = await sql<{ id: string; definition: string }>`select id, definition from custom_objects`.execute(db);
  for (const object of objects.rows) {
    const definition = JSON.parse(object.definition) as Definition;
    for (let after = 0; ; ) {
      const { rows } = await sql<{ seq: number; data: string }>`select seq, data from records where object_id = ${object.id} and seq > ${after} order by seq limit ${BATCH}`.execute(db);
      if (rows.length === 0) break;
      const values = rows.flatMap((r) => indexedValues(definition, JSON.parse(r.data) as Record<string, unknown>).map((v) => ({ record_seq: r.seq, object_id: object.id, field_key: v.fieldKey, num_value: v.numValue, text_value: v.textValue })));
      for (let i = 0; i < values.length; i += 200) await db.insertInto('record_values').values(values.slice(i, i + 200)).execute();
      after = Number(rows[rows.length - 1]!.seq);
    }
  }
}
