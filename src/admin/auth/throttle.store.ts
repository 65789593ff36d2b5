import type { Executor } from '../../db/database.js';

export interface ThrottleState {
  key: string;
  failures: number;
  lastFailureAt: string;
  lockedUntil: string | null;
}

export async function findThrottles(db: Executor, keys: readonly string[]): Promise<ThrottleState[]> {
  const rows = await db.selectFrom('admin_sign_in_throttle').selectAll().where('key', 'in', [...keys]).execute();
  return rows.map((r) => ({ key: r.key, failures: r.failures, lastFailureAt: r.last_failure_at, lockedUntil: r.locked_until }));
}

export async function saveThrottle(db: Executor, s: ThrottleState): Promise<void> {
  const values = { failures: s.failures, last_failure_at: s.lastFailureAt, locked_until: s.lockedUntil };
  await db
    .insertInto('admin_sign_in_throttle')
    .values({ key: s.key, ...values })
    .onConflict((oc) => oc.column('key').doUpdateSet(values))
    .execute();
}

export async function deleteThrottle(db: Executor, key: string): Promise<void> {
  await db.deleteFrom('admin_sign_in_throttle').where('key', '=', key).execute();
}

/** Forgets failures older than `before` that hold no lock, so the table only holds recent attempts. */
export async function deleteStaleThrottles(db: Executor, before: string, now: string): Promise<void> {
  await db
    .deleteFrom('admin_sign_in_throttle')
    .where('last_failure_at', '<', before)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
    .execute();
}
