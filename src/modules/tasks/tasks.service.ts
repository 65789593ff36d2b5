import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/database.js';
import { notFound, validationFailed, type FieldError } from '../../errors.js';
import { formatDateOnly, localDate, parseDateOnly } from '../../lib/dates.js';
import { newId } from '../../lib/ids.js';
import { listRequest } from '../../lib/list-request.js';
import { listCursors } from '../../crypto/list-cursors.js';
import { buildEvent, diffChanges, type Changes, type EventType } from '../events/events.js';
import { recordEvent } from '../events/outbox.store.js';
import { planReminder } from '../objects/reminders.service.js';
import { deletePendingReminder, deleteReminder, organizationTimezone } from '../objects/reminders.store.js';
import { activeUserIds } from '../orgs/users.store.js';
import type { Caller } from '../shared/caller.js';
import { targetErrors } from '../shared/item-target.js';
import { defaultSort, listView, purgeItem, restoreItem, trashItem, type DeleteOptions, type Trashable } from '../shared/trash.service.js';
import { checkCondition, lockForCondition, type WriteOptions } from '../shared/precondition.js';
import type { CreateTaskBody, ListTasksQuery, Task, UpdateTaskBody } from './tasks.schemas.js';
import { findTask, insertTask, listTasks as listStored, updateTask as updateStored, type StoredTask } from './tasks.store.js';

type Ctx = Pick<AppContext, 'database' | 'clock' | 'entityTagger'>;
const EVENT_FIELDS = ['title', 'target', 'dueDate', 'assigneeId', 'status', 'completedAt'] as const;

export function toTask(s: StoredTask): Task {
  return {
    id: s.id,
    title: s.title,
    target: s.target,
    dueDate: s.dueDate === null ? null : formatDateOnly(s.dueDate),
    assigneeId: s.assigneeId,
    status: s.status,
    completedAt: s.completedAt,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
    deletedAt: s.deletedAt,
  };
}

/** Every rule of a create or patch JSON Schema can't check: the due day, a live target, a known assignee. */
async function inputErrors(db: Executor, organizationId: string, input: UpdateTaskBody): Promise<{ errors: FieldError[]; dueDate?: string | null }> {
  const errors: FieldError[] = [];
  let dueDate: string | null | undefined;
  if (input.dueDate !== undefined && input.dueDate !== null) {
    const day = parseDateOnly(input.dueDate);
    if (day.ok) dueDate = day.value;
    else errors.push({ field: 'dueDate', code: 'invalid_date', message: day.reason });
  } else if (input.dueDate === null) dueDate = null;
  if (input.target) errors.push(...(await targetErrors(db, organizationId, input.target)));
  if (input.assigneeId && !(await activeUserIds(db, organizationId, [input.assigneeId])).has(input.assigneeId)) {
    errors.push({ field: 'assigneeId', code: 'not_found', message: 'is not an active user of this organization' });
  }
  return { errors, ...(dueDate !== undefined ? { dueDate } : {}) };
}

/** An open task with a due day has a reminder (task.due at 09:00 local on the day); a done one none. */
async function planTaskReminder(ctx: Ctx, db: Executor, task: StoredTask, now: Date): Promise<void> {
  const dueDate = task.status === 'open' ? task.dueDate : null;
  const timezone = dueDate === null ? 'UTC' : await organizationTimezone(db, ctx.database.dialect, task.organizationId);
  await planReminder(db, { kind: 'task', itemId: task.id, organizationId: task.organizationId, dueDate, timezone, now });
}

async function emit(trx: Executor, caller: Caller, type: EventType, task: Task, description: string, changes: Changes, now: Date) {
  await recordEvent(trx, buildEvent({ type, organizationId: caller.organizationId, object: 'task', objectId: task.id, description, changes, actor: caller.actor, now }));
}

/** Stores the task, plans its reminder and records task.created, in the caller's transaction. */
export async function createTask(ctx: Ctx, trx: Executor, caller: Caller, input: CreateTaskBody): Promise<Task> {
  const { errors, dueDate } = await inputErrors(trx, caller.organizationId, input);
  if (errors.length) throw validationFailed(errors);
  const now = ctx.clock.now();
  const status = input.status ?? 'open';
  const stored: StoredTask = {
    id: newId(now),
    organizationId: caller.organizationId,
    target: input.target ?? null,
    title: input.title.trim(),
    dueDate: dueDate ?? null,
    assigneeId: input.assigneeId ?? null,
    status,
    completedAt: status === 'done' ? now.toISOString() : null,
    createdAt: now.toISOString(),
    updatedAt: now.toISOString(),
    deletedAt: null,
  };
  await insertTask(trx, stored);
  await planTaskReminder(ctx, trx, stored, now);
  const task = toTask(stored);
  await emit(trx, caller, 'task.created', task, 'Task created', diffChanges(null, task, EVENT_FIELDS), now);
  return task;
}

export async function getTask(ctx: Ctx, organizationId: string, id: string): Promise<Task> {
  const stored = await findTask(ctx.database.db, organizationId, id);
  if (!stored) throw notFound('Task');
  return toTask(stored);
}

/** Filters, and `overdue`: open tasks due before the organization's local today. */
export async function listTasks(ctx: Ctx & Pick<AppContext, 'cursorSeal'>, organization: { id: string; timezone: string }, query: ListTasksQuery) {
  const today = localDate(ctx.clock.now(), organization.timezone);
  const overdue = query.overdue === true;
  const dueBefore = overdue && (query.dueBefore === undefined || today < query.dueBefore) ? today : query.dueBefore;
  const filter = { status: overdue ? 'open' : query.status, assigneeId: query.assigneeId, targetId: query.targetId, targetObject: query.targetObject, dueBefore, dueAfter: query.dueAfter };
  if (overdue && query.status === 'done') throw validationFailed([{ field: 'overdue', code: 'not_allowed', message: 'only open tasks are overdue; leave status out or send open' }]);
  const view = listView(query);
  const { rows, pagination } = await listStored(ctx.database.db, organization.id, filter, listRequest(query, listCursors(ctx, organization.id), defaultSort(view)), view);
  return { tasks: rows.map(toTask), pagination };
}

/**
 * Applies the sent fields. Marking the task done records task.completed (status and completedAt); any other
 * change one task.updated; nothing changed records nothing and keeps updatedAt. The reminder follows.
 */
export async function updateTask(ctx: Ctx, trx: Executor, caller: Caller, id: string, patch: UpdateTaskBody, opts: WriteOptions = {}): Promise<Task> {
  await lockForCondition(ctx, trx, 'tasks', caller.organizationId, id, opts);
  const current = await findTask(trx, caller.organizationId, id);
  if (!current) throw notFound('Task');
  checkCondition(ctx, opts, 'task', toTask(current));
  const { errors, dueDate } = await inputErrors(trx, caller.organizationId, patch);
  if (errors.length) throw validationFailed(errors);
  const now = ctx.clock.now();
  const status = patch.status ?? current.status;
  const next: StoredTask = {
    ...current,
    title: patch.title?.trim() ?? current.title,
    target: patch.target === undefined ? current.target : patch.target,
    dueDate: dueDate === undefined ? current.dueDate : dueDate,
    assigneeId: patch.assigneeId === undefined ? current.assigneeId : patch.assigneeId,
    status,
    completedAt: status === current.status ? current.completedAt : status === 'done' ? now.toISOString() : null,
  };
  const before = toTask(current);
  const after = toTask(next);
  const completion = diffChanges(before, after, ['status', 'completedAt']);
  const completed = status === 'done' && current.status === 'open';
  const others = diffChanges(before, after, completed ? ['title', 'target', 'dueDate', 'assigneeId'] : EVENT_FIELDS);
  if (!completed && Object.keys(others.after).length === 0) return before;
  next.updatedAt = now.toISOString();
  await updateStored(trx, next);
  if (next.status !== current.status || next.dueDate !== current.dueDate) await planTaskReminder(ctx, trx, next, now);
  const view = { ...after, updatedAt: next.updatedAt };
  if (completed) await emit(trx, caller, 'task.completed', view, 'Task completed', completion, now);
  if (Object.keys(others.after).length > 0) await emit(trx, caller, 'task.updated', view, `Task updated: ${Object.keys(others.after).join(', ')}`, others, now);
  return view;
}

/** Tasks in the trash mechanism: a trashed task's pending reminder is dropped, and planned again on restore. */
function trashableTasks(ctx: Ctx, organizationId: string): Trashable<StoredTask, Task> {
  return {
    object: 'task',
    label: 'Task',
    find: (db, id, view) => findTask(db, organizationId, id, view),
    present: toTask,
    trashed: (db, t) => deletePendingReminder(db, t.id, 'task'),
    purging: (db, t) => deleteReminder(db, t.id, 'task'),
    async restored(db, t) {
      await planTaskReminder(ctx, db, t, ctx.clock.now());
      return t;
    },
  };
}

/** DELETE /tasks/{id}: to the trash (task.deleted), or for good with `permanent` (task.purged). */
export function deleteTask(ctx: Ctx & Pick<AppContext, 'config' | 'cipher'>, trx: Executor, caller: Caller, id: string, permanent: boolean, opts: DeleteOptions = {}): Promise<Task> {
  return (permanent ? purgeItem : trashItem)(ctx, trx, caller, trashableTasks(ctx, caller.organizationId), id, opts);
}

export function restoreTask(ctx: Ctx & Pick<AppContext, 'config'>, trx: Executor, caller: Caller, id: string, opts: WriteOptions = {}): Promise<Task> {
  return restoreItem(ctx, trx, caller, trashableTasks(ctx, caller.organizationId), id, opts);
}
