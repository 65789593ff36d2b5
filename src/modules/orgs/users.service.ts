import type { AppContext } from '../../context.js';
import { AppError, notFound, type FieldError } from '../../errors.js';
import { findUser, listUsers, listUsersPage, setUserAdmin, type UserRow } from './users.store.js';
import { listRequest } from '../../lib/list-request.js';
import { listCursors } from '../../crypto/list-cursors.js';
import type { ListUsersQuery, User } from './users.schemas.js';
import { contactAad } from '../../crypto/contact-fields.js';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../../crypto/password.js';

type Ctx = Pick<AppContext, 'database' | 'cipher' | 'clock'>;

/** A user as administrators see them: e-mail decrypted, password reduced to "can sign in". */
export interface UserSummary {
  id: string;
  name: string;
  email: string;
  isAdmin: boolean;
  canSignIn: boolean;
  /** False once an administrator deactivated the user: no sign-in, no API keys, no new work. */
  active: boolean;
  createdAt: string;
}

function toSummary(ctx: Pick<Ctx, 'cipher'>, u: UserRow): UserSummary {
  return {
    id: u.id,
    name: u.name,
    email: ctx.cipher.decrypt(u.emailEnc, contactAad('users', u.id, 'email')),
    isAdmin: u.isAdmin,
    canSignIn: u.passwordHash !== null,
    active: u.deactivatedAt === null,
    createdAt: u.createdAt,
  };
}

export async function listUserSummaries(ctx: Ctx, organizationId: string): Promise<UserSummary[]> {
  const users = await listUsers(ctx.database.db, organizationId);
  return users.map((u) => toSummary(ctx, u));
}

/** One user of the organization; another organization's is "not found". */
export async function getUserSummary(ctx: Ctx, organizationId: string, userId: string): Promise<UserSummary> {
  const user = await findUser(ctx.database.db, organizationId, userId);
  if (!user) throw notFound('User');
  return toSummary(ctx, user);
}

/** A user as the API shows them (GET /users): the summary without sign-in details. */
function toUser(ctx: Pick<Ctx, 'cipher'>, u: UserRow): User {
  const { id, name, email, isAdmin, active, createdAt } = toSummary(ctx, u);
  return { id, name, email, role: isAdmin ? 'admin' : 'member', active, createdAt };
}

export async function listApiUsers(ctx: Ctx & Pick<AppContext, 'cursorSeal'>, organizationId: string, query: ListUsersQuery) {
  const request = listRequest(query, listCursors(ctx, organizationId));
  const isAdmin = query.role === undefined ? undefined : query.role === 'admin';
  const { rows, pagination } = await listUsersPage(ctx.database.db, ctx.database.dialect, organizationId, { isAdmin, active: query.active }, request);
  return { users: rows.map((u) => toUser(ctx, u)), pagination };
}

export async function getApiUser(ctx: Ctx, organizationId: string, userId: string): Promise<User> {
  const user = await findUser(ctx.database.db, organizationId, userId);
  if (!user) throw notFound('User');
  return toUser(ctx, user);
}

/** The rules every new console password follows (at creation, change, reset), reported on `field`. */
export function passwordErrors(field: string, password: string): FieldError[] {
  if (password.length < MIN_PASSWORD_LENGTH) return [{ field, code: 'too_short', message: `must be at least ${MIN_PASSWORD_LENGTH} characters` }];
  if (password.length > MAX_PASSWORD_LENGTH) return [{ field, code: 'too_long', message: `must be at most ${MAX_PASSWORD_LENGTH} characters` }];
  return [];
}

/**
 * Grants or withdraws the administrator role. Nobody withdraws their own: the organization can therefore
 * never lose its last administrator through the console.
 */
export async function setAdministrator(ctx: Ctx, organizationId: string, userId: string, isAdmin: boolean, byUserId: string): Promise<void> {
  if (!isAdmin && userId === byUserId) throw new AppError('CONFLICT', 'You cannot remove your own administrator role');
  if (!(await findUser(ctx.database.db, organizationId, userId))) throw notFound('User');
  await setUserAdmin(ctx.database.db, organizationId, userId, isAdmin, ctx.clock.now().toISOString());
}
