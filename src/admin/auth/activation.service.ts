import type { AppContext } from '../../context.js';
import { AppError, notFound } from '../../errors.js';
import { userEmailIndex } from '../../modules/orgs/orgs.service.js';
import { findUser, findUserByEmailIndex, lockActiveAdminIds, setUserDeactivatedAt } from '../../modules/orgs/users.store.js';
import { deleteUserSessions } from './sessions.store.js';

type Ctx = Pick<AppContext, 'database' | 'clock'>;

/**
 * Deactivates a user of the organization (an administrator in the console, `byUserId`; an operator at the
 * shell, null): their console sessions end in the same transaction, sign-in and their API keys stop working
 * until they are reactivated, and they can't be given work. Nobody deactivates themself, and the
 * organization keeps at least one active administrator. Returns the number of console sessions ended.
 */
export async function deactivateUser(ctx: Ctx, organizationId: string, userId: string, byUserId: string | null): Promise<number> {
  if (userId === byUserId) throw new AppError('CONFLICT', 'You cannot deactivate yourself; another administrator can');
  const now = ctx.clock.now().toISOString();
  const ended = await ctx.database.transaction(async (trx) => {
    const user = await findUser(trx, organizationId, userId);
    if (!user) throw notFound('User');
    if (user.deactivatedAt !== null) return 0;
    const admins = await lockActiveAdminIds(trx, ctx.database.dialect, organizationId);
    if (admins.length === 1 && admins[0] === userId) {
      throw new AppError('CONFLICT', `${user.name} is the organization's last active administrator; make another user an administrator first`);
    }
    await setUserDeactivatedAt(trx, organizationId, userId, now, now);
    return deleteUserSessions(trx, organizationId, userId);
  });
  // Every instance's key lookup cache has dropped the user's keys before this returns (db/change-feed.ts).
  await ctx.database.changesSeen?.();
  return ended;
}

/** Gives a deactivated user back sign-in (with their password, if they have one), their API keys and work. */
export async function reactivateUser(ctx: Ctx, organizationId: string, userId: string): Promise<void> {
  const now = ctx.clock.now().toISOString();
  if (!(await setUserDeactivatedAt(ctx.database.db, organizationId, userId, null, now))) throw notFound('User');
  await ctx.database.changesSeen?.();
}

/** The id of the organization's user with this e-mail (the CLI names users by e-mail); another organization's is "not found". */
export async function userIdByEmail(ctx: Ctx & Pick<AppContext, 'blindIndex'>, organizationId: string, email: string): Promise<string> {
  const user = await findUserByEmailIndex(ctx.database.db, userEmailIndex(ctx, email));
  if (!user || user.organizationId !== organizationId) throw notFound('User');
  return user.id;
}
