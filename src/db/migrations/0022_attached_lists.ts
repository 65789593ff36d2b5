import { sql } from 'kysely';
import type { Migration } from './helpers.js';

/** The tables an attached row's target can be in, by the kind stored in target_object. */
const TARGET_TABLES: Record<string, string> = { lead: 'leads', account: 'accounts', deal: 'deals', record: 'records' };

/** Visible rows: live themselves, on a live target (or none). The predicate of every list index below. */
const VISIBLE = sql`deleted_at is null and target_deleted_at is null`;

/**
 * Cursor pagination, sort and filters on notes, tasks and users (contract §8), and notes and tasks that
 * follow their item into the trash (contract §7).
 *
 * - `target_deleted_at` on notes and tasks: the trash time of the item they are on, null while it is live.
 *   Trashing an item sets it, restoring clears it (modules/shared/attached.store.ts); reads hide those rows
 *   (db/trash.ts). Rows on items already in the trash are marked here. An index on (organization_id,
 *   target_id) over every row serves that write and an item's purge.
 * - Per sort, an index on (organization_id, sort key, seq) over the visible rows: a cursor page is one index
 *   range at any depth. Tasks sort on their due day with the undated last (the key `coalesce(due_date,
 *   '9999-12-31')`, written the same in tasks.store.ts so both databases use the expression index), and
 *   "my tasks" (assignee) has its own index in creation order.
 * - Users get a tiebreak: SQLite's rowid (every index ends with it), a new `seq` column on PostgreSQL.
 */
export const attachedLists: Migration = {
  async up({ db, dialect }) {
    for (const table of ['notes', 'tasks']) {
      await sql`alter table ${sql.table(table)} add column target_deleted_at text`.execute(db);
      for (const [object, targets] of Object.entries(TARGET_TABLES)) {
        await sql`update ${sql.table(table)} set target_deleted_at = (select t.deleted_at from ${sql.table(targets)} t where t.id = ${sql.ref(`${table}.target_id`)} and t.organization_id = ${sql.ref(`${table}.organization_id`)})
          where target_object = ${object}`.execute(db);
      }
      await db.schema.createIndex(`${table}_target_any`).on(table).columns(['organization_id', 'target_id']).execute();
      const visible = (name: string, keys: ReturnType<typeof sql>) => sql`create index ${sql.id(`${table}_visible_${name}`)} on ${sql.table(table)} (organization_id, ${keys}, seq) where ${VISIBLE}`.execute(db);
      await visible('created_at', sql`created_at`);
      await visible('updated_at', sql`updated_at`);
      if (table === 'tasks') {
        await visible('due', sql`(coalesce(due_date, '9999-12-31'))`);
        await visible('assignee_created_at', sql`assignee_id, created_at`);
      }
    }
    if (dialect === 'postgres') await sql`alter table users add column seq bigserial`.execute(db);
    const tiebreak = dialect === 'postgres' ? sql`, seq` : sql``;
    for (const key of ['created_at', 'updated_at', 'name']) {
      await sql`create index ${sql.id(`users_org_${key}`)} on users (organization_id, ${sql.ref(key)}${tiebreak})`.execute(db);
    }
  },
};
