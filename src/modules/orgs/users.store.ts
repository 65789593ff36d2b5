import type { Executor } from '../../db/database.js';
import { contactColumns } from '../../crypto/contact-fields.js';
import { offsetOf, type PageRequest } from '../../lib/pagination.js';

/** Users' sign-in e-mails are sealed like any contact detail. */
export const USER_ENCRYPTED_COLUMNS = contactColumns('users', ['email']);

export interface UserRow {
  id: string;
  organizationId: string;
  name: string;
  emailEnc: string;
  /** The e-mail's blind index: the sign-in lookup, and the account's key in the sign-in back-off. */
  emailBidx: string;
  isAdmin: boolean;
  passwordHash: string | null;
  createdAt: string;
  updatedAt: string;
}

type Row = { id: string; organization_id: string; name: string; email_enc: string; email_bidx: string; is_admin: number; password_hash: string | null; created_at: string; updated_at: string };

const toUser = (r: Row): UserRow => ({
  id: r.id,
  organizationId: r.organization_id,
  name: r.name,
  emailEnc: r.email_enc,
  emailBidx: r.email_bidx,
  isAdmin: r.is_admin === 1,
  passwordHash: r.password_hash,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const COLUMNS = ['id', 'organization_id', 'name', 'email_enc', 'email_bidx', 'is_admin', 'password_hash', 'created_at', 'updated_at'] as const;

export async function insertUser(db: Executor, user: UserRow): Promise<void> {
  await db
    .insertInto('users')
    .values({
      id: user.id,
      organization_id: user.organizationId,
      name: user.name,
      email_enc: user.emailEnc,
      email_bidx: user.emailBidx,
      password_hash: user.passwordHash,
      is_admin: user.isAdmin ? 1 : 0,
      created_at: user.createdAt,
      updated_at: user.updatedAt,
    })
    .execute();
}

export async function findUser(db: Executor, organizationId: string, id: string): Promise<UserRow | undefined> {
  const row = await db.selectFrom('users').select(COLUMNS).where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  return row && toUser(row);
}

/** Any organization's user: for operators at the shell (`crm user set-password`), who name a user by id alone. */
export async function findUserById(db: Executor, id: string): Promise<UserRow | undefined> {
  const row = await db.selectFrom('users').select(COLUMNS).where('id', '=', id).executeTakeFirst();
  return row && toUser(row);
}

export async function findUserByEmailIndex(db: Executor, emailBidx: string): Promise<UserRow | undefined> {
  const row = await db.selectFrom('users').select(COLUMNS).where('email_bidx', '=', emailBidx).executeTakeFirst();
  return row && toUser(row);
}

export async function listUsers(db: Executor, organizationId: string): Promise<UserRow[]> {
  const rows = await db.selectFrom('users').select(COLUMNS).where('organization_id', '=', organizationId).orderBy('created_at').execute();
  return rows.map(toUser);
}

/** A page of the organization's users, newest first, with their count. */
export async function listUsersPage(db: Executor, organizationId: string, page: PageRequest): Promise<{ users: UserRow[]; total: number }> {
  const q = db.selectFrom('users').where('organization_id', '=', organizationId);
  const [rows, count] = await Promise.all([
    q.select(COLUMNS).orderBy('created_at', 'desc').orderBy('id', 'desc').limit(page.limit).offset(offsetOf(page)).execute(),
    q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { users: rows.map(toUser), total: Number(count.n) };
}

/** Which of `ids` are users of the organization (for validating references in one query). */
export async function existingUserIds(db: Executor, organizationId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('users').select('id').where('organization_id', '=', organizationId).where('id', 'in', [...ids]).execute();
  return new Set(rows.map((r) => r.id));
}

export async function countAdmins(db: Executor, organizationId: string): Promise<number> {
  const row = await db
    .selectFrom('users')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('organization_id', '=', organizationId)
    .where('is_admin', '=', 1)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function setUserAdmin(db: Executor, organizationId: string, id: string, isAdmin: boolean, now: string): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ is_admin: isAdmin ? 1 : 0, updated_at: now })
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/**
 * Replaces the password hash (null: no console sign-in). With `expectedHash`, only while the hash is still
 * the one the caller verified, so a change racing another change or a reset can't silently win.
 */
export async function setUserPassword(
  db: Executor,
  organizationId: string,
  id: string,
  passwordHash: string | null,
  now: string,
  expectedHash?: string,
): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ password_hash: passwordHash, updated_at: now })
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .$if(expectedHash !== undefined, (q) => q.where('password_hash', '=', expectedHash!))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
