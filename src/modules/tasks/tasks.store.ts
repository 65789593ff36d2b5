import type { Executor } from '../../db/database.js';
import type { TasksTable } from '../../db/schema.js';
import { inView, listOrder, type TrashView } from '../../db/trash.js';
import { offsetOf, type PageRequest } from '../../lib/pagination.js';
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

type Row = Omit<TasksTable, 'seq' | 'deleted_at'> & { deleted_at: string | null };

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

function toRow(t: StoredTask): Omit<TasksTable, 'seq' | 'deleted_at'> {
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

export interface TaskFilter {
  status?: TaskStatus | undefined;
  assigneeId?: string | undefined;
  targetId?: string | undefined;
  /** Exclusive bounds on the due day. */
  dueBefore?: string | undefined;
  dueAfter?: string | undefined;
}

/** A page of tasks (live, or the trash), newest first, with the total count of the filter. */
export async function listTasks(db: Executor, organizationId: string, filter: TaskFilter, page: PageRequest, view: TrashView) {
  let q = db.selectFrom('tasks').where('organization_id', '=', organizationId).where(inView('tasks', view));
  if (filter.status !== undefined) q = q.where('status', '=', filter.status);
  if (filter.assigneeId !== undefined) q = q.where('assignee_id', '=', filter.assigneeId);
  if (filter.targetId !== undefined) q = q.where('target_id', '=', filter.targetId);
  if (filter.dueBefore !== undefined) q = q.where('due_date', '<', filter.dueBefore);
  if (filter.dueAfter !== undefined) q = q.where('due_date', '>', filter.dueAfter);
  const [rows, count] = await Promise.all([
    q.selectAll().orderBy(listOrder('tasks', view)).limit(page.limit).offset(offsetOf(page)).execute(),
    q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { tasks: rows.map(toStoredTask), total: Number(count.n) };
}

/** Every task (live or trashed) on one of the items `targetIds`: an erasure and an item's purge remove them. */
export async function tasksOn(db: Executor, organizationId: string, targetIds: readonly string[]): Promise<StoredTask[]> {
  if (targetIds.length === 0) return [];
  const rows = await db.selectFrom('tasks').selectAll().where('organization_id', '=', organizationId).where('target_id', 'in', [...targetIds]).orderBy('seq').execute();
  return rows.map(toStoredTask);
}
