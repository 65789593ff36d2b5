import { sql } from 'kysely';
import { createSubstringIndex } from './0001_foundation.js';
import { notNull, withSeq, type Migration } from './helpers.js';

/**
 * Custom objects (their definition as JSON), their records, and the reminder plan of records with a due
 * date. Record search: PostgreSQL gets one pg_trgm index on the denormalized `search_text` here; SQLite
 * gets one FTS5 table per object, created with the object (see record-search.store.ts for why).
 */
export const objectsRecords: Migration = {
  async up({ db, dialect }) {
    await withSeq(db.schema.createTable('custom_objects'), dialect)
      .addColumn('id', 'text', (c) => c.notNull().unique())
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('slug', 'text', notNull)
      .addColumn('name', 'text', notNull)
      .addColumn('definition', 'text', notNull)
      .addColumn('created_at', 'text', notNull)
      .addColumn('updated_at', 'text', notNull)
      .addUniqueConstraint('custom_objects_org_slug', ['organization_id', 'slug'])
      .execute();

    await withSeq(db.schema.createTable('records'), dialect)
      .addColumn('id', 'text', (c) => c.notNull().unique())
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('object_id', 'text', (c) => c.notNull().references('custom_objects.id'))
      .addColumn('stage', 'text')
      .addColumn('data', 'text', notNull)
      .addColumn('search_text', 'text', notNull)
      .addColumn('due_date', 'text')
      .addColumn('created_at', 'text', notNull)
      .addColumn('updated_at', 'text', notNull)
      .execute();
    // Newest first within an object, optionally narrowed by stage; overdue scans the due dates of one object.
    await db.schema.createIndex('records_object_seq').on('records').columns(['object_id', 'seq']).execute();
    await db.schema.createIndex('records_object_stage_seq').on('records').columns(['object_id', 'stage', 'seq']).execute();
    await db.schema.createIndex('records_object_due').on('records').columns(['object_id', 'due_date']).execute();
    if (dialect === 'postgres') await createSubstringIndex(db, dialect, 'records', 'search_text');

    await db.schema
      .createTable('record_reminders')
      .addColumn('record_id', 'text', (c) => c.primaryKey().references('records.id'))
      .addColumn('organization_id', 'text', notNull)
      .addColumn('due_date', 'text', notNull)
      .addColumn('fire_at', 'text', notNull)
      .addColumn('fired_at', 'text')
      .execute();
    // The scheduler's tick reads only what is still pending and due.
    await db.schema.createIndex('record_reminders_pending').on('record_reminders').column('fire_at').where(sql.ref('fired_at'), 'is', null).execute();
    await db.schema.createIndex('record_reminders_org').on('record_reminders').columns(['organization_id', 'due_date']).execute();
  },
};
