import type { AppContext } from '../../context.js';
import { hashPassword, MAX_PASSWORD_LENGTH, verifyPassword } from '../../crypto/password.js';
import { userEmailIndex } from '../../modules/orgs/orgs.service.js';
import { findUserByEmailIndex } from '../../modules/orgs/users.store.js';
import { startSession } from './sessions.service.js';
import { clearAccountFailures, lockedForMs, recordFailure, signInKeys } from './throttle.service.js';

type Ctx = Pick<AppContext, 'database' | 'blindIndex' | 'clock'>;

export type SignInResult =
  | { ok: true; token: string }
  | { ok: false; reason: 'invalid' | 'locked'; retryInMs: number };

/** Compared against when the e-mail is unknown, so timing doesn't tell which accounts exist. */
let decoyHash: Promise<string> | undefined;
const decoy = () => (decoyHash ??= hashPassword('decoy password that matches nothing'));

export async function signIn(ctx: Ctx, input: { email: string; password: string; ip: string; userAgent: string }): Promise<SignInResult> {
  const emailIndex = userEmailIndex(ctx, input.email);
  const keys = signInKeys(emailIndex, input.ip);
  const locked = await lockedForMs(ctx, keys);
  if (locked > 0) return { ok: false, reason: 'locked', retryInMs: locked };
  const user = await findUserByEmailIndex(ctx.database.db, emailIndex);
  const tooLong = input.password.length > MAX_PASSWORD_LENGTH;
  const valid = !tooLong && (await verifyPassword(input.password, user?.passwordHash ?? (await decoy())));
  // A deactivated user's right password fails like a wrong one: the page tells nobody who was deactivated.
  if (!user || user.passwordHash === null || user.deactivatedAt !== null || !valid) {
    await recordFailure(ctx, keys);
    return { ok: false, reason: 'invalid', retryInMs: await lockedForMs(ctx, keys) };
  }
  await clearAccountFailures(ctx, keys);
  const { token } = await startSession(ctx, { userId: user.id, organizationId: user.organizationId, ip: input.ip, userAgent: input.userAgent });
  return { ok: true, token };
}
