import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/database.js';
import { inTransaction } from '../../db/transaction.js';
import { localDate, zonedDateTimeToUtc } from '../../lib/dates.js';
import { buildEvent } from '../events/events.js';
import { recordEvent } from '../events/outbox.store.js';
import type { Actor } from '../orgs/principal.js';
import { startPeriodic, type Periodic } from '../../lib/periodic.js';
import { deleteReminder, dueReminders, findReminder, markFired, objectSlugsOf, pendingDueDates, REMINDER_KINDS, replanDueDate, savePendingReminder, type Reminder, type ReminderKind } from './reminders.store.js';

/** record.due and task.due go out at this local time of the organization, on the due day (contract §4). */
export const REMINDER_HOUR = 9;
export const SCHEDULER_ACTOR: Actor = { type: 'SYSTEM', id: 'scheduler', channel: 'API' };
const BATCH = 100;

/**
 * When the reminder of a record due `dueDate` fires: 09:00 on that day in the organization's zone (or the
 * end of a DST gap), which may already be past on the due day itself (it then fires at the next tick). Null
 * once the organization's local date is after the due day: a due date already past never fires.
 */
export function plannedFireAt(dueDate: string, timezone: string, now: Date): string | null {
  if (localDate(now, timezone) > dueDate) return null;
  return zonedDateTimeToUtc(dueDate, REMINDER_HOUR, 0, timezone).toISOString();
}

/**
 * Keeps a record's or task's reminder in step with its due date, in the caller's transaction. An unchanged due
 * date keeps its plan, fired or not (never twice); a new one gets a fresh, unfired plan, so a due date moved to
 * another day after its reminder fired fires again on the new day.
 */
export async function planReminder(
  db: Executor,
  r: { kind: ReminderKind; itemId: string; organizationId: string; dueDate: string | null; timezone: string; now: Date },
): Promise<void> {
  if (r.dueDate === null) return deleteReminder(db, r.itemId, r.kind);
  const existing = await findReminder(db, r.itemId, r.kind);
  if (existing?.dueDate === r.dueDate) return;
  const fireAt = plannedFireAt(r.dueDate, r.timezone, r.now);
  if (fireAt === null) return deleteReminder(db, r.itemId, r.kind);
  await savePendingReminder(db, { kind: r.kind, itemId: r.itemId, organizationId: r.organizationId, dueDate: r.dueDate, fireAt });
}

/**
 * After a time-zone change: every reminder that has not fired moves to 09:00 of its day in the new zone (or
 * is dropped when that day is already over there). Fired reminders stay fired. One statement per due date.
 */
export async function replanOrganizationReminders(db: Executor, organizationId: string, timezone: string, now: Date): Promise<void> {
  for (const kind of REMINDER_KINDS) {
    for (const dueDate of await pendingDueDates(db, kind, organizationId)) {
      await replanDueDate(db, kind, organizationId, dueDate, plannedFireAt(dueDate, timezone, now));
    }
  }
}

type SchedulerCtx = Pick<AppContext, 'database' | 'clock' | 'outbox'>;

/** The event of a reminder that fires: record.due (with the record's object slug) or task.due. */
function dueEvent(reminder: Reminder, slugs: Map<string, string>, now: Date) {
  const objectSlug = reminder.kind === 'record' ? slugs.get(reminder.itemId) : undefined;
  return buildEvent({
    type: reminder.kind === 'record' ? 'record.due' : 'task.due',
    organizationId: reminder.organizationId,
    object: reminder.kind,
    objectId: reminder.itemId,
    ...(objectSlug !== undefined ? { objectSlug } : {}),
    description: `${reminder.kind === 'record' ? 'Record' : 'Task'} due on ${reminder.dueDate}`,
    changes: { before: {}, after: {} },
    actor: SCHEDULER_ACTOR,
    now,
  });
}

/**
 * One scheduler tick: fires every reminder whose time has come. Each is claimed (compare-and-set, rows
 * locked with SKIP LOCKED on PostgreSQL) in the same transaction that records its record.due or task.due event, so
 * across restarts and any number of instances each planned reminder fires exactly once. A reminder missed
 * while no scheduler ran fires late rather than never. Returns how many fired.
 */
export async function runDueReminders(ctx: SchedulerCtx): Promise<number> {
  let fired = 0;
  for (;;) {
    const { claimed, emitted } = await inTransaction(ctx, async (trx) => {
      const now = ctx.clock.now();
      const due = await dueReminders(trx, ctx.database.dialect, now.toISOString(), BATCH);
      const slugs = await objectSlugsOf(trx, due.filter((r) => r.kind === 'record').map((r) => r.itemId));
      let count = 0;
      for (const reminder of due) {
        if (!(await markFired(trx, reminder, now.toISOString()))) continue;
        await recordEvent(trx, dueEvent(reminder, slugs, now));
        count += 1;
      }
      return { claimed: due.length, emitted: count };
    });
    fired += emitted;
    if (claimed < BATCH) return fired;
  }
}

export type ReminderScheduler = Periodic;

/** Runs runDueReminders every `intervalMs` (see startPeriodic). */
export function startReminderScheduler(ctx: SchedulerCtx, opts: { intervalMs: number; onError?: (err: unknown) => void }): ReminderScheduler {
  return startPeriodic(() => runDueReminders(ctx), opts);
}
