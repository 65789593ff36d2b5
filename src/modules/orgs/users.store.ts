import type { Executor } from '../../db/database.js';
import { contactColumns } from '../../crypto/contact-fields.js';
import { sql } from 'kysely';
import type { Dialect } from '../../config.js';
import { columnPosition, columnSort, readPage, timeRangeConditions, TIME_AND_NAME, type ListPage } from '../../db/list-page.js';
import type { ListRequest } from '../../lib/list-request.js';

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
  /** When an administrator deactivated the user; null while active. */
  deactivatedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

type Row = { id: string; organization_id: string; name: string; email_enc: string; email_bidx: string; is_admin: number; password_hash: string | null; deactivated_at: string | null; created_at: string; updated_at: string };

const toUser = (r: Row): UserRow => ({
  id: r.id,
  organizationId: r.organization_id,
  name: r.name,
  emailEnc: r.email_enc,
  emailBidx: r.email_bidx,
  isAdmin: r.is_admin === 1,
  passwordHash: r.password_hash,
  deactivatedAt: r.deactivated_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const COLUMNS = ['id', 'organization_id', 'name', 'email_enc', 'email_bidx', 'is_admin', 'password_hash', 'deactivated_at', 'created_at', 'updated_at'] as const;

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
      deactivated_at: user.deactivatedAt,
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

/** The tiebreak of a user list: users have no seq column on SQLite, where the rowid ends every index (migration 0022). */
const USER_SEQ: Record<Dialect, string> = { sqlite: 'users.rowid', postgres: 'users.seq' };

export interface UserFilter {
  isAdmin?: boolean | undefined;
  active?: boolean | undefined;
}

/** A page of the organization's users in the requested sort (db/list-page.ts). */
export async function listUsersPage(db: Executor, dialect: Dialect, organizationId: string, filter: UserFilter, request: ListRequest): Promise<ListPage<UserRow>> {
  let q = db.selectFrom('users').where('users.organization_id', '=', organizationId);
  if (filter.isAdmin !== undefined) q = q.where('users.is_admin', '=', filter.isAdmin ? 1 : 0);
  if (filter.active !== undefined) q = q.where('users.deactivated_at', filter.active ? 'is' : 'is not', null);
  for (const c of timeRangeConditions('users', request.range)) q = q.where(c);
  const seq = sql.ref(USER_SEQ[dialect]);
  const key = { ...columnSort('users', request.sort, TIME_AND_NAME), seq };
  const page = await readPage<Row & { seq: number }>(q, key, request, columnPosition(request.sort), (rows) => rows.select([...COLUMNS, sql<number>`${seq}`.as('seq')]).execute());
  return { rows: page.rows.map(toUser), pagination: page.pagination };
}

/** Which of `ids` are users of the organization (for validating references in one query). */
export async function existingUserIds(db: Executor, organizationId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('users').select('id').where('organization_id', '=', organizationId).where('id', 'in', [...ids]).execute();
  return new Set(rows.map((r) => r.id));
}

/** Which of `ids` are active users of the organization: the users work may be given to (owners, assignees, rules). */
export async function activeUserIds(db: Executor, organizationId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db
    .selectFrom('users')
    .select('id')
    .where('organization_id', '=', organizationId)
    .where('id', 'in', [...ids])
    .where('deactivated_at', 'is', null)
    .execute();
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

/**
 * The organization's active administrators, locked until the transaction ends (PostgreSQL `FOR UPDATE`;
 * SQLite transactions hold the write lock from the start), so that two administrators deactivating each
 * other at once can't both succeed: the second reads the first's commit.
 */
export async function lockActiveAdminIds(db: Executor, dialect: Dialect, organizationId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('users')
    .select('id')
    .where('organization_id', '=', organizationId)
    .where('is_admin', '=', 1)
    .where('deactivated_at', 'is', null)
    .$if(dialect === 'postgres', (q) => q.forUpdate())
    .execute();
  return rows.map((r) => r.id);
}

/** Deactivates (a time) or reactivates (null) the user; false when the organization has no such user. */
export async function setUserDeactivatedAt(db: Executor, organizationId: string, id: string, deactivatedAt: string | null, now: string): Promise<boolean> {
  const result = await db
    .updateTable('users')
    .set({ deactivated_at: deactivatedAt, updated_at: now })
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
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
