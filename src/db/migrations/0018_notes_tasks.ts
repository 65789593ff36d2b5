import { sql } from 'kysely';
import { notNull, withSeq, type Migration } from './helpers.js';

/**
 * Notes and tasks (contract §9) and the reminder plan of tasks with a due date.
 *
 * Both hang on an item by (target_object, target_id), where target_object is the kind as events name it
 * (lead, account, deal, record) and records also keep their object's slug; a task's target is optional. A
 * note's body is encrypted at rest like contact fields (it is personal data). Lists read live rows through
 * partial indexes (`where deleted_at is null`), as migration 0011 does for the other trashable tables; the
 * timeline reads one item's notes and tasks newest first from (organization_id, target_id, created_at).
 * Task reminders mirror record_reminders (one scheduler fires both), in their own table because a reminder
 * row references the item it belongs to.
 */
export const notesTasks: Migration = {
  async up({ db, dialect }) {
    await withSeq(db.schema.createTable('notes'), dialect)
      .addColumn('id', 'text', (c) => c.notNull().unique())
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('target_object', 'text', notNull)
      .addColumn('target_id', 'text', notNull)
      .addColumn('target_slug', 'text')
      .addColumn('body_enc', 'text', notNull)
      .addColumn('created_at', 'text', notNull)
      .addColumn('updated_at', 'text', notNull)
      .addColumn('deleted_at', 'text')
      .execute();
    await withSeq(db.schema.createTable('tasks'), dialect)
      .addColumn('id', 'text', (c) => c.notNull().unique())
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('target_object', 'text')
      .addColumn('target_id', 'text')
      .addColumn('target_slug', 'text')
      .addColumn('title', 'text', notNull)
      .addColumn('due_date', 'text')
      .addColumn('assignee_id', 'text')
      .addColumn('status', 'text', notNull)
      .addColumn('completed_at', 'text')
      .addColumn('created_at', 'text', notNull)
      .addColumn('updated_at', 'text', notNull)
      .addColumn('deleted_at', 'text')
      .execute();
    for (const table of ['notes', 'tasks']) {
      const live = (name: string, columns: string[]) => db.schema.createIndex(`${table}_live_${name}`).on(table).columns(columns).where(sql.ref('deleted_at'), 'is', null).execute();
      await live('org_seq', ['organization_id', 'seq']);
      await live('target', ['organization_id', 'target_id', 'created_at']);
      await db.schema.createIndex(`${table}_trash`).on(table).columns(['organization_id', 'deleted_at']).where(sql.ref('deleted_at'), 'is not', null).execute();
    }
    await db.schema.createIndex('tasks_live_assignee').on('tasks').columns(['organization_id', 'assignee_id', 'seq']).where(sql.ref('deleted_at'), 'is', null).execute();
    await db.schema.createIndex('tasks_live_status').on('tasks').columns(['organization_id', 'status', 'seq']).where(sql.ref('deleted_at'), 'is', null).execute();

    await db.schema
      .createTable('task_reminders')
      .addColumn('task_id', 'text', (c) => c.primaryKey().references('tasks.id'))
      .addColumn('organization_id', 'text', notNull)
      .addColumn('due_date', 'text', notNull)
      .addColumn('fire_at', 'text', notNull)
      .addColumn('fired_at', 'text')
      .execute();
    await db.schema.createIndex('task_reminders_pending').on('task_reminders').column('fire_at').where(sql.ref('fired_at'), 'is', null).execute();
    await db.schema.createIndex('task_reminders_org').on('task_reminders').columns(['organization_id', 'due_date']).execute();
  },
};
