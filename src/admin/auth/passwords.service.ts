import type { AppContext } from '../../context.js';
import { AppError, notFound, validationFailed, type FieldError } from '../../errors.js';
import { hashPassword, MAX_PASSWORD_LENGTH, verifyPassword } from '../../crypto/password.js';
import { passwordErrors } from '../../modules/orgs/users.service.js';
import { findUser, findUserById, setUserPassword, type UserRow } from '../../modules/orgs/users.store.js';
import type { Viewer } from '../module.js';
import { renewSessionToken } from './sessions.service.js';
import { deleteUserSessions } from './sessions.store.js';
import { accountKey, clearAccountFailures, lockedForMs, recordFailure, signInKeys } from './throttle.service.js';

type Ctx = Pick<AppContext, 'database' | 'clock'>;

export interface NewPassword {
  newPassword: string;
  confirmPassword: string;
}

function newPasswordErrors(input: NewPassword): FieldError[] {
  const errors = passwordErrors('newPassword', input.newPassword);
  if (input.newPassword !== input.confirmPassword) errors.push({ field: 'confirmPassword', code: 'mismatch', message: 'does not match the new password' });
  return errors;
}

/** The new password when it was typed the same twice and is acceptable, else a 400 naming what is wrong. */
export function confirmedPassword(input: NewPassword): string {
  const errors = newPasswordErrors(input);
  if (errors.length) throw validationFailed(errors);
  return input.newPassword;
}

export type PasswordChange =
  | { ok: true; token: string; signedOut: number }
  | { ok: false; reason: 'locked'; retryInMs: number }
  | { ok: false; reason: 'invalid'; errors: FieldError[]; retryInMs: number };

/**
 * A signed-in user changes their own password. The current password is a guess like a sign-in's: it counts
 * against the same back-off (the account's and the IP's), and a locked account can't try at all. On
 * success their other sessions end, and this one carries on under a new cookie (`token`).
 */
export async function changeOwnPassword(ctx: Ctx, viewer: Viewer, input: NewPassword & { currentPassword: string; ip: string }): Promise<PasswordChange> {
  const user = await findUser(ctx.database.db, viewer.organization.id, viewer.user.id);
  if (!user) throw notFound('User');
  const keys = signInKeys(user.emailBidx, input.ip);
  const locked = await lockedForMs(ctx, keys);
  if (locked > 0) return { ok: false, reason: 'locked', retryInMs: locked };
  const errors = newPasswordErrors(input);
  if (input.currentPassword === '') return { ok: false, reason: 'invalid', errors: [{ field: 'currentPassword', code: 'required', message: 'is required' }, ...errors], retryInMs: 0 };
  const current = user.passwordHash;
  const valid = current !== null && input.currentPassword.length <= MAX_PASSWORD_LENGTH && (await verifyPassword(input.currentPassword, current));
  if (!valid) {
    await recordFailure(ctx, keys);
    return { ok: false, reason: 'invalid', errors: [{ field: 'currentPassword', code: 'incorrect', message: 'is incorrect' }, ...errors], retryInMs: await lockedForMs(ctx, keys) };
  }
  await clearAccountFailures(ctx, keys);
  if (input.newPassword === input.currentPassword) errors.push({ field: 'newPassword', code: 'unchanged', message: 'must differ from the current password' });
  if (errors.length) return { ok: false, reason: 'invalid', errors, retryInMs: 0 };
  const hash = await hashPassword(input.newPassword);
  const now = ctx.clock.now().toISOString();
  return ctx.database.transaction(async (trx) => {
    if (!(await setUserPassword(trx, user.organizationId, user.id, hash, now, current))) {
      throw new AppError('CONFLICT', 'Your password was changed elsewhere in the meantime. Sign in again with the new one.');
    }
    const token = await renewSessionToken(trx, viewer.session.id);
    if (token === null) throw new AppError('CONFLICT', 'This session was signed out in the meantime.');
    return { ok: true, token, signedOut: await deleteUserSessions(trx, user.organizationId, user.id, viewer.session.id) };
  });
}

/**
 * Sets (a string) or removes (null) a user's console password and ends every session they have, in one
 * transaction: whoever was signed in with the old password is out. The account's sign-in back-off is
 * cleared, since it guarded a password that no longer exists. Returns how many sessions ended.
 */
async function replacePassword(ctx: Ctx, user: UserRow, password: string | null): Promise<number> {
  const hash = password === null ? null : await hashPassword(password);
  const now = ctx.clock.now().toISOString();
  const ended = await ctx.database.transaction(async (trx) => {
    await setUserPassword(trx, user.organizationId, user.id, hash, now);
    return deleteUserSessions(trx, user.organizationId, user.id);
  });
  await clearAccountFailures(ctx, [accountKey(user.emailBidx)]);
  return ended;
}

/** An administrator's own password changes only with the current one (changeOwnPassword), never by reset. */
async function otherUser(ctx: Ctx, organizationId: string, userId: string, byUserId: string): Promise<UserRow> {
  if (userId === byUserId) throw new AppError('CONFLICT', 'Change your own password from your account page: it asks for your current password');
  const user = await findUser(ctx.database.db, organizationId, userId);
  if (!user) throw notFound('User');
  return user;
}

/** An administrator sets another user's password (a reset, or console access for a user who had none). */
export async function resetPassword(ctx: Ctx, organizationId: string, userId: string, input: NewPassword, byUserId: string): Promise<number> {
  const user = await otherUser(ctx, organizationId, userId, byUserId);
  const errors = newPasswordErrors(input);
  if (errors.length) throw validationFailed(errors);
  return replacePassword(ctx, user, input.newPassword);
}

/** An administrator removes another user's console access: no password, no session. The user keeps their data. */
export async function removeConsoleAccess(ctx: Ctx, organizationId: string, userId: string, byUserId: string): Promise<number> {
  return replacePassword(ctx, await otherUser(ctx, organizationId, userId, byUserId), null);
}

/** `crm user set-password`: an operator with shell access, for any user (a locked-out last administrator). */
export async function setPasswordAsOperator(ctx: Ctx, userId: string, input: NewPassword): Promise<number> {
  const user = await findUserById(ctx.database.db, userId);
  if (!user) throw notFound('User');
  const errors = newPasswordErrors(input);
  if (errors.length) throw validationFailed(errors);
  return replacePassword(ctx, user, input.newPassword);
}
