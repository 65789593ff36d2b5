import { sql, type Kysely, type SqlBool } from 'kysely';
import type { Dialect } from '../../config.js';
import type { Executor } from '../../db/database.js';

/**
 * The reminder plans of records (record.due) and tasks (task.due): one table per kind, because a plan row
 * references its item, with the same columns but the id's name. Every function takes the kind; the scheduler
 * reads both.
 */
export type ReminderKind = 'record' | 'task';
const TABLES = {
  record: { table: 'record_reminders', id: 'record_id', items: 'records' },
  task: { table: 'task_reminders', id: 'task_id', items: 'tasks' },
} as const;
export const REMINDER_KINDS = Object.keys(TABLES) as ReminderKind[];

/** The two tables seen through their shared shape (the id column named per kind). */
const loose = (db: Executor) => db as unknown as Kysely<any>;

export interface Reminder {
  kind: ReminderKind;
  /** The record's or the task's id. */
  itemId: string;
  organizationId: string;
  dueDate: string;
  fireAt: string;
  firedAt: string | null;
}

type Row = { item_id: string; organization_id: string; due_date: string; fire_at: string; fired_at: string | null };
const toReminder = (kind: ReminderKind, r: Row): Reminder => ({ kind, itemId: r.item_id, organizationId: r.organization_id, dueDate: r.due_date, fireAt: r.fire_at, firedAt: r.fired_at });
const columns = (kind: ReminderKind) => [`${TABLES[kind].id} as item_id`, 'organization_id', 'due_date', 'fire_at', 'fired_at'];

export async function findReminder(db: Executor, itemId: string, kind: ReminderKind = 'record'): Promise<Reminder | undefined> {
  const t = TABLES[kind];
  const r = (await loose(db).selectFrom(t.table).select(columns(kind)).where(t.id, '=', itemId).executeTakeFirst()) as Row | undefined;
  return r && toReminder(kind, r);
}

/** A fresh, unfired plan for the item (replacing any earlier one). */
export async function savePendingReminder(db: Executor, r: Omit<Reminder, 'firedAt'>): Promise<void> {
  const t = TABLES[r.kind];
  await loose(db)
    .insertInto(t.table)
    .values({ [t.id]: r.itemId, organization_id: r.organizationId, due_date: r.dueDate, fire_at: r.fireAt, fired_at: null })
    .onConflict((oc) => oc.column(t.id).doUpdateSet({ due_date: r.dueDate, fire_at: r.fireAt, fired_at: null }))
    .execute();
}

export async function deleteReminder(db: Executor, itemId: string, kind: ReminderKind = 'record'): Promise<void> {
  const t = TABLES[kind];
  await loose(db).deleteFrom(t.table).where(t.id, '=', itemId).execute();
}

/** Drops an item's reminder unless it has fired (a fired one stays, so a restore never fires it twice). */
export async function deletePendingReminder(db: Executor, itemId: string, kind: ReminderKind = 'record'): Promise<void> {
  const t = TABLES[kind];
  await loose(db).deleteFrom(t.table).where(t.id, '=', itemId).where('fired_at', 'is', null).execute();
}

/** The reminders of items trashed before `cutoff` (of one organization, or all): removed before the items. */
export async function deleteRemindersOfExpiredTrash(db: Executor, kind: ReminderKind, cutoff: string, organizationId?: string): Promise<void> {
  const t = TABLES[kind];
  let expired = loose(db).selectFrom(t.items).select('id').where('deleted_at', 'is not', null).where('deleted_at', '<', cutoff);
  if (organizationId !== undefined) expired = expired.where('organization_id', '=', organizationId);
  await loose(db).deleteFrom(t.table).where(t.id, 'in', expired).execute();
}

/** The distinct due dates of an organization's reminders of one kind that have not fired yet. */
export async function pendingDueDates(db: Executor, kind: ReminderKind, organizationId: string): Promise<string[]> {
  const rows = await loose(db)
    .selectFrom(TABLES[kind].table)
    .select('due_date')
    .distinct()
    .where('organization_id', '=', organizationId)
    .where('fired_at', 'is', null)
    .execute();
  return rows.map((r) => r.due_date as string);
}

/** Moves (or, with null, drops) the unfired reminders of one kind and due date of an organization. */
export async function replanDueDate(db: Executor, kind: ReminderKind, organizationId: string, dueDate: string, fireAt: string | null): Promise<void> {
  const table = TABLES[kind].table;
  if (fireAt === null) {
    await loose(db).deleteFrom(table).where('organization_id', '=', organizationId).where('due_date', '=', dueDate).where('fired_at', 'is', null).execute();
    return;
  }
  await loose(db).updateTable(table).set({ fire_at: fireAt }).where('organization_id', '=', organizationId).where('due_date', '=', dueDate).where('fired_at', 'is', null).execute();
}

/**
 * Up to `limit` unfired reminders (of every kind) whose time has come, oldest first. On PostgreSQL the rows are
 * locked and rows locked by another scheduler skipped, so instances share the work instead of queueing on each
 * other; SQLite serializes write transactions, and markFired's compare-and-set settles any race there.
 */
export async function dueReminders(db: Executor, dialect: Dialect, now: string, limit: number): Promise<Reminder[]> {
  const perKind = await Promise.all(
    REMINDER_KINDS.map(async (kind) => {
      let q = loose(db).selectFrom(TABLES[kind].table).select(columns(kind)).where('fired_at', 'is', null).where('fire_at', '<=', now).orderBy('fire_at').limit(limit);
      // A task hidden with its trashed item keeps its plan and fires once the item is restored (late, never lost).
      if (kind === 'task') q = q.where(sql<SqlBool>`not exists (select 1 from tasks where tasks.id = task_reminders.task_id and tasks.target_deleted_at is not null)`);
      if (dialect === 'postgres') q = q.forUpdate().skipLocked();
      return ((await q.execute()) as Row[]).map((r) => toReminder(kind, r));
    }),
  );
  return perKind.flat().sort((a, b) => a.fireAt.localeCompare(b.fireAt)).slice(0, limit);
}

/** Compare-and-set: true for the one caller that marks this planned reminder as fired. */
export async function markFired(db: Executor, r: Reminder, now: string): Promise<boolean> {
  const t = TABLES[r.kind];
  const result = await loose(db)
    .updateTable(t.table)
    .set({ fired_at: now })
    .where(t.id, '=', r.itemId)
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
