import type { AppContext } from '../../context.js';
import { deleteExpired } from '../../db/trash.js';
import { inTransaction } from '../../db/transaction.js';
import { startPeriodic, type Periodic } from '../../lib/periodic.js';
import { SCHEDULER_ACTOR } from '../objects/reminders.service.js';
import { deleteRemindersOfExpiredTrash } from '../objects/reminders.store.js';
import { recordPurged, retentionCutoff, TRASH_TABLES, type TrashObject } from './trash.service.js';

type Ctx = Pick<AppContext, 'database' | 'clock' | 'config' | 'outbox' | 'cipher'>;
const BATCH = 200;
/** How often the scheduler looks for expired trash: retention is counted in days, so hourly is prompt enough. */
export const TRASH_PURGE_INTERVAL_MS = 3_600_000;

/**
 * Removes for good every item trashed longer than TRASH_RETENTION_DAYS (of one organization, or all), with
 * what hangs on it, and records `<object>.purged` for each — in batches, each batch one transaction. Rows are
 * claimed by the DELETE itself (db/trash.ts), so with several schedulers each item is purged, and its event
 * recorded, exactly once. Returns how many items this call removed.
 */
export async function purgeExpiredTrash(ctx: Ctx, organizationId?: string): Promise<number> {
  let purged = 0;
  for (const object of Object.keys(TRASH_TABLES) as TrashObject[]) {
    for (;;) {
      const count = await inTransaction(ctx, async (trx) => {
        const now = ctx.clock.now();
        const cutoff = retentionCutoff(ctx);
        if (object === 'record' || object === 'task') await deleteRemindersOfExpiredTrash(trx, object, cutoff, organizationId);
        const rows = await deleteExpired(trx, ctx.database.dialect, TRASH_TABLES[object], cutoff, BATCH, organizationId);
        await recordPurged(trx, ctx, object, rows, SCHEDULER_ACTOR, now);
        return rows.length;
      });
      purged += count;
      if (count < BATCH) break;
    }
  }
  return purged;
}

/** The scheduler's purge, every `intervalMs` (the first at once; see startPeriodic). */
export function startTrashPurger(ctx: Ctx, opts: { intervalMs: number; onError?: (err: unknown) => void }): Periodic {
  return startPeriodic(() => purgeExpiredTrash(ctx), opts);
}
