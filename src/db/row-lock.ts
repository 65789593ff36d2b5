import { sql, type SqlBool } from 'kysely';
import type { Dialect } from '../config.js';
import type { Executor } from './database.js';

export type LockableTable = 'leads' | 'accounts' | 'deals' | 'records' | 'notes' | 'tasks' | 'webhook_endpoints';

/**
 * Locks one row of the organization until the transaction ends, so that what the transaction reads next is
 * the version its write replaces: a conditional write (If-Match) compares the tag of that version, and a
 * concurrent writer waits for the commit, then reads the new one. PostgreSQL: `FOR UPDATE`. SQLite: nothing
 * to do, transactions begin IMMEDIATE and hold the database's one write lock from the start.
 */
export async function lockRow(db: Executor, dialect: Dialect, table: LockableTable, organizationId: string, id: string): Promise<void> {
  if (dialect === 'sqlite') return;
  await db.selectFrom(table).select('id').where('organization_id', '=', organizationId).where('id', '=', id).forUpdate().execute();
}

/**
 * Locks many rows of the organization in one statement (a batch's items), in id order so that two batches
 * naming the same rows wait for each other instead of deadlocking. As lockRow: nothing to do on SQLite.
 * The organization is checked on the rows the id index finds (`(organization_id || '') =`, which no index
 * answers): with `organization_id =`, PostgreSQL before the first statistics of a freshly filled table AND-ed a
 * bitmap of the organization's whole (organization_id, seq) index into the lock of a batch's 100 rows.
 */
export async function lockRows(db: Executor, dialect: Dialect, table: LockableTable, organizationId: string, ids: readonly string[]): Promise<void> {
  if (dialect === 'sqlite' || ids.length === 0) return;
  await db
    .selectFrom(table)
    .select('id')
    .where('id', 'in', [...new Set(ids)])
    .where(sql<SqlBool>`(${sql.ref(`${table}.organization_id`)} || '') = ${organizationId}`)
    .orderBy('id')
    .forUpdate()
    .execute();
}
