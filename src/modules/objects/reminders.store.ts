import type { Dialect } from '../../config.js';
import type { Executor } from '../../db/database.js';

export interface Reminder {
  recordId: string;
  organizationId: string;
  dueDate: string;
  fireAt: string;
  firedAt: string | null;
}

export async function findReminder(db: Executor, recordId: string): Promise<Reminder | undefined> {
  const r = await db.selectFrom('record_reminders').selectAll().where('record_id', '=', recordId).executeTakeFirst();
  return r && { recordId: r.record_id, organizationId: r.organization_id, dueDate: r.due_date, fireAt: r.fire_at, firedAt: r.fired_at };
}

/** A fresh, unfired plan for the record (replacing any earlier one). */
export async function savePendingReminder(db: Executor, r: Omit<Reminder, 'firedAt'>): Promise<void> {
  await db
    .insertInto('record_reminders')
    .values({ record_id: r.recordId, organization_id: r.organizationId, due_date: r.dueDate, fire_at: r.fireAt, fired_at: null })
    .onConflict((oc) => oc.column('record_id').doUpdateSet({ due_date: r.dueDate, fire_at: r.fireAt, fired_at: null }))
    .execute();
}

export async function deleteReminder(db: Executor, recordId: string): Promise<void> {
  await db.deleteFrom('record_reminders').where('record_id', '=', recordId).execute();
}

/** Drops a record's reminder unless it has fired (a fired one stays, so a restore never fires it twice). */
export async function deletePendingReminder(db: Executor, recordId: string): Promise<void> {
  await db.deleteFrom('record_reminders').where('record_id', '=', recordId).where('fired_at', 'is', null).execute();
}

/** The reminders of records trashed before `cutoff` (of one organization, or all): removed before the records. */
export async function deleteRemindersOfExpiredTrash(db: Executor, cutoff: string, organizationId?: string): Promise<void> {
  let expired = db.selectFrom('records').select('id').where('deleted_at', 'is not', null).where('deleted_at', '<', cutoff);
  if (organizationId !== undefined) expired = expired.where('organization_id', '=', organizationId);
  await db.deleteFrom('record_reminders').where('record_id', 'in', expired).execute();
}

/** The distinct due dates of an organization's reminders that have not fired yet. */
export async function pendingDueDates(db: Executor, organizationId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('record_reminders')
    .select('due_date')
    .distinct()
    .where('organization_id', '=', organizationId)
    .where('fired_at', 'is', null)
    .execute();
  return rows.map((r) => r.due_date);
}

/** Moves (or, with null, drops) the unfired reminders of one due date of an organization. */
export async function replanDueDate(db: Executor, organizationId: string, dueDate: string, fireAt: string | null): Promise<void> {
  if (fireAt === null) {
    await db.deleteFrom('record_reminders').where('organization_id', '=', organizationId).where('due_date', '=', dueDate).where('fired_at', 'is', null).execute();
    return;
  }
  await db
    .updateTable('record_reminders')
    .set({ fire_at: fireAt })
    .where('organization_id', '=', organizationId)
    .where('due_date', '=', dueDate)
    .where('fired_at', 'is', null)
    .execute();
}

/**
 * Up to `limit` unfired reminders whose time has come, oldest first. On PostgreSQL the rows are locked and
 * rows locked by another scheduler skipped, so instances share the work instead of queueing on each other;
 * SQLite serializes write transactions, and markFired's compare-and-set settles any race there.
 */
export async function dueReminders(db: Executor, dialect: Dialect, now: string, limit: number): Promise<Reminder[]> {
  let q = db
    .selectFrom('record_reminders')
    .selectAll()
    .where('fired_at', 'is', null)
    .where('fire_at', '<=', now)
    .orderBy('fire_at')
    .limit(limit);
  if (dialect === 'postgres') q = q.forUpdate().skipLocked();
  const rows = await q.execute();
  return rows.map((r) => ({ recordId: r.record_id, organizationId: r.organization_id, dueDate: r.due_date, fireAt: r.fire_at, firedAt: r.fired_at }));
}

/** Compare-and-set: true for the one caller that marks this planned reminder as fired. */
export async function markFired(db: Executor, r: Reminder, now: string): Promise<boolean> {
  const result = await db
    .updateTable('record_reminders')
    .set({ fired_at: now })
    .where('record_id', '=', r.recordId)
    .where('due_date', '=', r.dueDate)
    .where('fire_at', '=', r.fireAt)
    .where('fired_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The object slug of each record (record.due carries it). */
export async function objectSlugsOf(db: Executor, recordIds: string[]): Promise<Map<string, string>> {
  if (recordIds.length === 0) return new Map();
  const rows = await db
    .selectFrom('records')
    .innerJoin('custom_objects', 'custom_objects.id', 'records.object_id')
    .select(['records.id', 'custom_objects.slug'])
    .where('records.id', 'in', recordIds)
    .execute();
  return new Map(rows.map((r) => [r.id, r.slug]));
}

/**
 * The organization's time zone, for planning a reminder. On PostgreSQL the row is share-locked, so a
 * concurrent time-zone change (which re-plans under the row's update lock) is ordered before or after this
 * plan, never across it.
 */
export async function organizationTimezone(db: Executor, dialect: Dialect, organizationId: string): Promise<string> {
  let q = db.selectFrom('organizations').select('timezone').where('id', '=', organizationId);
  if (dialect === 'postgres') q = q.forShare();
  const row = await q.executeTakeFirst();
  return row?.timezone ?? 'UTC';
}
