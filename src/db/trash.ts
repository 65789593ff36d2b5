import { sql, type Expression, type RawBuilder, type SqlBool } from 'kysely';
import type { Dialect } from '../config.js';
import type { Executor } from './database.js';

/**
 * The trash (contract §7), in one place: every store asks here which rows a read may see and in which order,
 * and the delete/restore/purge services write `deleted_at` only through these functions.
 */

/** Which rows a read sees: live ones (everything but the trash), the trash, or both (purge, erasure). */
export type TrashView = 'live' | 'trash' | 'any';
export type TrashTable = 'leads' | 'accounts' | 'deals' | 'records' | 'notes' | 'tasks';

/**
 * The one trash predicate, on `table` (a table name or alias). `live` is the form the partial indexes of
 * migration 0011 are built on (`deleted_at is null`), so the planner picks them for every live list.
 */
export function inView(table: string, view: TrashView): Expression<SqlBool> {
  const column = sql.ref(`${table}.deleted_at`);
  if (view === 'any') return sql<SqlBool>`1 = 1`;
  const own = view === 'live' ? sql<SqlBool>`${column} is null` : sql<SqlBool>`${column} is not null`;
  return ATTACHED_TABLES.has(table) ? sql<SqlBool>`${own} and ${sql.ref(`${table}.target_deleted_at`)} is null` : own;
}

/**
 * Notes and tasks follow the item they are on: while it is in the trash they are hidden from both views
 * (its restore brings them back as they were, its purge removes them). Their list indexes (migration 0022)
 * are built on this predicate.
 */
const ATTACHED_TABLES = new Set(['notes', 'tasks']);

/**
 * The same predicate for a query that an index on another column answers best (an exact e-mail or phone
 * lookup through its blind-index index). SQLite's planner, without statistics, would otherwise take the
 * partial live index and walk the whole organization; the unary `+` leaves `deleted_at` a check on the rows
 * the lookup finds. PostgreSQL picks by its statistics and gets the plain predicate.
 */
export function inViewByRow(dialect: Dialect, table: string, view: TrashView): Expression<SqlBool> {
  if (dialect === 'sqlite' && view === 'live') return sql<SqlBool>`+${sql.ref(`${table}.deleted_at`)} is null`;
  return inView(table, view);
}

/**
 * Live rows, as a check on the rows an exact lookup finds, on both databases (a duplicate probe through a
 * blind-index index, which names no organization): no planner can prove a partial live index's predicate from
 * `(deleted_at || '') is null`. With the plain predicate, PostgreSQL before the first statistics of a freshly
 * filled table AND-ed a bitmap of the whole live index (every live lead of every organization) into each probe.
 */
export function liveByRow(table: string): Expression<SqlBool> {
  return sql<SqlBool>`(${sql.ref(`${table}.deleted_at`)} || '') is null`;
}

/** The ORDER BY of a list: newest first; the trash newest deletion first (then newest created). */
export function listOrder(table: string, view: TrashView): RawBuilder<unknown> {
  const seq = sql`${sql.ref(`${table}.seq`)} desc`;
  return view === 'trash' ? sql`${sql.ref(`${table}.deleted_at`)} desc, ${seq}` : seq;
}

/**
 * Moves one row of the organization to the trash (`deletedAt`) or back (null). A compare-and-set on the
 * row's current state: false when it was not where the move starts (already trashed, or not in the trash).
 */
export async function setDeletedAt(db: Executor, table: TrashTable, organizationId: string, id: string, deletedAt: string | null): Promise<boolean> {
  const result = await db
    .updateTable(table)
    .set({ deleted_at: deletedAt })
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .where(inView(table, deletedAt === null ? 'trash' : 'live'))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export interface PurgedRow {
  id: string;
  seq: number;
  organizationId: string;
  /** Records only: the object they belonged to (their search entries and slug hang on it). */
  objectId?: string;
}

type RemovedRow = { id: string; seq: number | string; organization_id: string; object_id?: string };

const purgedRow = (r: RemovedRow): PurgedRow => ({
  id: r.id,
  seq: Number(r.seq),
  organizationId: r.organization_id,
  ...(r.object_id !== undefined ? { objectId: r.object_id } : {}),
});

/**
 * Removes one row of the organization for good if it is in `view` (`any`: live or trashed); the removed row, if
 * there was one. Like setDeletedAt, a check on the row's current state: a row restored meanwhile stays.
 */
export async function deleteRow(db: Executor, table: TrashTable, organizationId: string, id: string, view: TrashView): Promise<PurgedRow | undefined> {
  const row = await db
    .deleteFrom(table)
    .where('organization_id', '=', organizationId)
    .where('id', '=', id)
    .where(inView(table, view))
    .returningAll()
    .executeTakeFirst();
  return row && purgedRow(row as RemovedRow);
}

/**
 * Removes up to `limit` rows trashed before `cutoff`, oldest deletion first, and returns them. The DELETE …
 * RETURNING is the claim: with several schedulers, a row is returned to exactly one of them (PostgreSQL skips
 * rows another scheduler has locked; SQLite runs one write transaction at a time).
 */
export async function deleteExpired(db: Executor, dialect: Dialect, table: TrashTable, cutoff: string, limit: number, organizationId?: string): Promise<PurgedRow[]> {
  const lock = dialect === 'postgres' ? sql`for update skip locked` : sql``;
  const scope = organizationId === undefined ? sql`` : sql`and organization_id = ${organizationId}`;
  const { rows } = await sql<RemovedRow>`delete from ${sql.table(table)} where seq in (
      select seq from ${sql.table(table)} where deleted_at is not null and deleted_at < ${cutoff} ${scope} order by deleted_at limit ${limit} ${lock}
    ) returning *`.execute(db);
  return rows.map(purgedRow);
}
