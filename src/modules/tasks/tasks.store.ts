import type { Executor } from '../../db/database.js';
import type { TasksTable } from '../../db/schema.js';
import { sql } from 'kysely';
import { inView, type TrashView } from '../../db/trash.js';
import { columnPosition, columnSort, equalityConditions, readPage, timeRangeConditions, TIME_AND_NAME, type ListPage, type PositionOf, type SortKey } from '../../db/list-page.js';
import type { ListRequest } from '../../lib/list-request.js';
import { targetColumns, targetOf } from '../shared/item-target.store.js';
import type { ItemTarget } from '../shared/item-target.js';
import type { TaskStatus } from './tasks.schemas.js';

/** A task as stored: its due date a calendar day 'YYYY-MM-DD'. */
export interface StoredTask {
  id: string;
  organizationId: string;
  target: ItemTarget | null;
  title: string;
  dueDate: string | null;
  assigneeId: string | null;
  status: TaskStatus;
  completedAt: string | null;
  createdAt: string;
  updatedAt: string;
  deletedAt: string | null;
}

type Row = Omit<TasksTable, 'seq' | 'deleted_at' | 'target_deleted_at'> & { deleted_at: string | null };

export const toStoredTask = (r: Row): StoredTask => ({
  id: r.id,
  organizationId: r.organization_id,
  target: targetOf(r),
  title: r.title,
  dueDate: r.due_date,
  assigneeId: r.assignee_id,
  status: r.status as TaskStatus,
  completedAt: r.completed_at,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  deletedAt: r.deleted_at,
});

function toRow(t: StoredTask): Omit<TasksTable, 'seq' | 'deleted_at' | 'target_deleted_at'> {
  return {
    id: t.id,
    organization_id: t.organizationId,
    ...targetColumns(t.target),
    title: t.title,
    due_date: t.dueDate,
    assignee_id: t.assigneeId,
    status: t.status,
    completed_at: t.completedAt,
    created_at: t.createdAt,
    updated_at: t.updatedAt,
  };
}

export async function insertTask(db: Executor, t: StoredTask): Promise<void> {
  await db.insertInto('tasks').values(toRow(t)).execute();
}

export async function findTask(db: Executor, organizationId: string, id: string, view: TrashView = 'live'): Promise<StoredTask | undefined> {
  const row = await db.selectFrom('tasks').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).where(inView('tasks', view)).executeTakeFirst();
  return row && toStoredTask(row);
}

export async function updateTask(db: Executor, t: StoredTask): Promise<void> {
  const { id: _id, organization_id: _org, created_at: _created, ...changes } = toRow(t);
  await db.updateTable('tasks').set(changes).where('organization_id', '=', t.organizationId).where('id', '=', t.id).execute();
}

/** The equality filters of `GET /tasks`: query parameter → column. */
export const TASK_FILTERS = { status: 'status', assigneeId: 'assignee_id', targetId: 'target_id', targetObject: 'target_object' } as const;
export type TaskFilter = Partial<Record<keyof typeof TASK_FILTERS, string>> & {
  /** Exclusive bounds on the due day. */
  dueBefore?: string | undefined;
  dueAfter?: string | undefined;
};

/** The undated sort last by due day: the same expression as the index of migration 0022 (a literal, not a parameter, so SQLite matches it). */
const NO_DUE_DATE = '9999-12-31';
const DUE_KEY = sql`coalesce(${sql.ref('tasks.due_date')}, '9999-12-31')`;

function taskSortKey(sort: string): { key: SortKey; positionOf: PositionOf<Row & { seq: number }> } {
  if (sort.replace(/^-/, '') !== 'dueDate') return { key: columnSort('tasks', sort, TIME_AND_NAME), positionOf: columnPosition(sort) };
  return {
    key: { expr: DUE_KEY, descending: sort.startsWith('-'), seq: sql.ref('tasks.seq'), valueType: 'string', expression: true },
    positionOf: (r) => ({ value: r.due_date ?? NO_DUE_DATE, seq: Number(r.seq) }),
  };
}

/** A page of tasks (live, or the trash) in the requested sort (db/list-page.ts). */
export async function listTasks(db: Executor, organizationId: string, filter: TaskFilter, request: ListRequest, view: TrashView): Promise<ListPage<StoredTask>> {
  let q = db.selectFrom('tasks').where('tasks.organization_id', '=', organizationId).where(inView('tasks', view));
  for (const c of [...equalityConditions('tasks', TASK_FILTERS, filter), ...timeRangeConditions('tasks', request.range)]) q = q.where(c);
  if (filter.dueBefore !== undefined) q = q.where('tasks.due_date', '<', filter.dueBefore);
  if (filter.dueAfter !== undefined) q = q.where('tasks.due_date', '>', filter.dueAfter);
  const { key, positionOf } = taskSortKey(request.sort);
  const page = await readPage<Row & { seq: number }>(q, key, request, positionOf);
  return { rows: page.rows.map(toStoredTask), pagination: page.pagination };
}

/** Every task (live or trashed) on one of the items `targetIds`: an erasure and an item's purge remove them. */
export async function tasksOn(db: Executor, organizationId: string, targetIds: readonly string[]): Promise<StoredTask[]> {
  if (targetIds.length === 0) return [];
  const rows = await db.selectFrom('tasks').selectAll().where('organization_id', '=', organizationId).where('target_id', 'in', [...targetIds]).orderBy('seq').execute();
  return rows.map(toStoredTask);
}
