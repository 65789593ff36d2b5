import type { AppContext } from '../../context.js';
import { AppError, notFound } from '../../errors.js';
import { findUser, listUsers, setUserAdmin } from './users.store.js';
import { contactAad } from '../../crypto/contact-fields.js';

type Ctx = Pick<AppContext, 'database' | 'cipher' | 'clock'>;

/** A user as administrators see them: e-mail decrypted, password reduced to "can sign in". */
export interface UserSummary {
  id: string;
  name: string;
  email: string;
  isAdmin: boolean;
  canSignIn: boolean;
  createdAt: string;
}

export async function listUserSummaries(ctx: Ctx, organizationId: string): Promise<UserSummary[]> {
  const users = await listUsers(ctx.database.db, organizationId);
  return users.map((u) => ({
    id: u.id,
    name: u.name,
    email: ctx.cipher.decrypt(u.emailEnc, contactAad('users', u.id, 'email')),
    isAdmin: u.isAdmin,
    canSignIn: u.passwordHash !== null,
    createdAt: u.createdAt,
  }));
}

/**
 * Grants or withdraws the administrator role. Nobody withdraws their own: the organization can therefore
 * never lose its last administrator through the console.
 */
export async function setAdministrator(ctx: Ctx, organizationId: string, userId: string, isAdmin: boolean, byUserId: string): Promise<void> {
  if (!isAdmin && userId === byUserId) throw new AppError('CONFLICT', 'You cannot remove your own administrator role');
  if (!(await findUser(ctx.database.db, organizationId, userId))) throw notFound('User', userId);
  await setUserAdmin(ctx.database.db, organizationId, userId, isAdmin, ctx.clock.now().toISOString());
}
