import type { AppContext } from '../../context.js';
import { deleteStaleThrottles, deleteThrottle, findThrottles, saveThrottle, type ThrottleState } from './throttle.store.js';

type Ctx = Pick<AppContext, 'database' | 'clock'>;

/**
 * Sign-in back-off, counted per account and per client IP. An account gets 5 free failures, an IP 20 (a
 * shared office may mistype); each failure past that locks the key for 1 minute, doubling up to 15. Failures
 * are forgotten an hour after the last one. A success clears the account's count, never the IP's, so an
 * attacker who owns one account can't reset their budget against the others.
 */
export const THROTTLE = {
  account: { freeFailures: 5 },
  ip: { freeFailures: 20 },
  baseLockMs: 60_000,
  maxLockMs: 15 * 60_000,
  forgetAfterMs: 3_600_000,
} as const;

export interface ThrottleKey {
  key: string;
  freeFailures: number;
}

/** The account key holds the e-mail's keyed blind index, never the address itself. */
export function accountKey(emailIndex: string): ThrottleKey {
  return { key: `account:${emailIndex}`, freeFailures: THROTTLE.account.freeFailures };
}

/** Sign-in, and the current password asked for by a password change, count against the same keys. */
export function signInKeys(emailIndex: string, ip: string): ThrottleKey[] {
  return [accountKey(emailIndex), { key: `ip:${ip}`, freeFailures: THROTTLE.ip.freeFailures }];
}

/** Milliseconds until sign-in may be tried again for any of these keys (0: not locked). */
export async function lockedForMs(ctx: Ctx, keys: readonly ThrottleKey[]): Promise<number> {
  const now = ctx.clock.now().getTime();
  const states = await findThrottles(ctx.database.db, keys.map((k) => k.key));
  return Math.max(0, ...states.map((s) => (s.lockedUntil ? new Date(s.lockedUntil).getTime() - now : 0)));
}

function nextState(previous: ThrottleState | undefined, key: ThrottleKey, now: Date): ThrottleState {
  const recent = previous && new Date(previous.lastFailureAt).getTime() + THROTTLE.forgetAfterMs > now.getTime();
  const failures = (recent ? previous.failures : 0) + 1;
  const over = failures - key.freeFailures;
  const lockMs = over >= 0 ? Math.min(THROTTLE.maxLockMs, THROTTLE.baseLockMs * 2 ** over) : 0;
  return {
    key: key.key,
    failures,
    lastFailureAt: now.toISOString(),
    lockedUntil: lockMs > 0 ? new Date(now.getTime() + lockMs).toISOString() : null,
  };
}

export async function recordFailure(ctx: Ctx, keys: readonly ThrottleKey[]): Promise<void> {
  const now = ctx.clock.now();
  const db = ctx.database.db;
  const states = new Map((await findThrottles(db, keys.map((k) => k.key))).map((s) => [s.key, s]));
  for (const key of keys) await saveThrottle(db, nextState(states.get(key.key), key, now));
  await deleteStaleThrottles(db, new Date(now.getTime() - THROTTLE.forgetAfterMs).toISOString(), now.toISOString());
}

export async function clearAccountFailures(ctx: Ctx, keys: readonly ThrottleKey[]): Promise<void> {
  const account = keys.find((k) => k.key.startsWith('account:'));
  if (account) await deleteThrottle(ctx.database.db, account.key);
}
