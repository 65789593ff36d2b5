import { inTransaction } from '../../db/transaction.js';
import { validationFailed } from '../../errors.js';
import { validateValue } from '../../http/validation.js';
import { addDays, localDate } from '../../lib/dates.js';
import { DEFAULT_LIMIT } from '../../lib/pagination.js';
import { ListTasksQuery, UpdateTaskBody, type Task } from '../../modules/tasks/tasks.schemas.js';
import { deleteTask, getTask, listTasks, restoreTask, updateTask } from '../../modules/tasks/tasks.service.js';
import { listUsers } from '../../modules/orgs/users.store.js';
import { own } from '../../lib/own.js';
import { badge, button, csrfField, dataTable, errorSummary, pager, selectField, type Option } from '../components.js';
import { dayOnly, timeTag } from '../format.js';
import { checkedBody, formBody, orNull, problemOf, queryPage, queryText, text, type FormProblem } from '../forms.js';
import { TIME_CONSOLE_SORTS } from '../list-controls.js';
import { html, type SafeHtml } from '../html.js';
import { callerOfViewer, viewerOf, type AdminDeps, type AdminModule } from '../module.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { TASKS_PATH, taskActions, type TaskReturn } from './task-actions.views.js';
import { ASSIGNED_TASK_LABELS, assigneeField, submittedNewTask, taskFields, taskInput, type NewTaskValues } from './task-form.views.js';
import { editConflict, submittedVersion, versionField, type EditedItem } from './edit-version.js';
import type { ItemTarget } from '../../modules/shared/item-target.js';
import { itemsOf } from './relation-items.js';
import { registerConsoleTrash, trashLink } from './trash.pages.js';
import type { RelatedItem } from './records.views.js';

/** The relation target a task's item is of: `leads`, `accounts`, `deals` or its object's slug. */
const targetOf = (target: ItemTarget) => (target.object === 'record' ? target.objectSlug ?? '' : `${target.object}s`);

/** The live items a page of tasks is on, by id (one read per kind), to name them. */
function taskItems(ctx: AdminDeps['ctx'], organization: { id: string; timezone: string }, tasks: readonly Task[]): Promise<Map<string, RelatedItem>> {
  const ids = new Map<string, Set<string>>();
  for (const { target } of tasks) if (target) ids.set(targetOf(target), (ids.get(targetOf(target)) ?? new Set()).add(target.id));
  return itemsOf(ctx, organization, ids);
}

/** The task's item named and linked, or its kind and id when it has no page or is no longer live. */
function targetCell(deps: AdminDeps, task: Task, items: ReadonlyMap<string, RelatedItem>): SafeHtml | string {
  if (!task.target) return html`<span class="muted">—</span>`;
  const page = deps.objectHref(task.target.object, task.target.id, task.target.objectSlug);
  const label = items.get(task.target.id)?.name ?? `${task.target.objectSlug ?? task.target.object} ${task.target.id.slice(-6)}`;
  return page ? html`<a href="${page}">${label}</a>` : label;
}

function taskRow(deps: AdminDeps, request: FastifyRequest, task: Task, today: string, timeZone: string, items: ReadonlyMap<string, RelatedItem>): SafeHtml {
  const overdue = task.status === 'open' && task.dueDate !== null && task.dueDate.slice(0, 10) < today;
  return html`<tr>
  <td>${task.title}</td>
  <td>${targetCell(deps, task, items)}</td>
  <td>${dayOnly(task.dueDate)}${overdue ? html` ${badge('Overdue', 'bad')}` : ''}</td>
  <td>${timeTag(task.createdAt, timeZone)}</td>
  <td>${task.status === 'done' ? badge('Done') : ''}${taskActions(request, task, 'tasks')}</td>
</tr>`;
}

const STATUSES: readonly Option[] = [
  { value: 'open', label: 'Open' },
  { value: 'done', label: 'Done' },
  { value: 'all', label: 'Open and done' },
];
const DUE: readonly Option[] = [
  { value: 'overdue', label: 'Overdue' },
  { value: 'week', label: 'Due within 7 days' },
];
const TASK_ORDERS: readonly Option[] = [{ value: 'dueDate', label: 'Due soonest' }, ...TIME_CONSOLE_SORTS];

interface TaskControls {
  status: string;
  due: string;
  sort: string;
}

/** The controls as the API's query: open by default; `week` is due from today through the 7th day, in the organization's calendar. */
function tasksQuery(c: TaskControls, today: string): Partial<ListTasksQuery> {
  const status = c.status === 'all' ? undefined : c.status === 'done' ? 'done' : 'open';
  return {
    ...(status ? { status } : {}),
    ...(c.due === 'overdue' ? { overdue: true } : {}),
    ...(c.due === 'week' ? { dueAfter: addDays(today, -1), dueBefore: addDays(today, 7) } : {}),
    ...(c.sort ? { sort: c.sort } : {}),
  } as Partial<ListTasksQuery>;
}

function tasksForm(c: TaskControls, problem: FormProblem | undefined): SafeHtml {
  const f = problem?.fields ?? {};
  return html`<form method="get" action="${TASKS_PATH}" class="search" role="search">
  ${selectField({ name: 'status', label: 'Status', value: c.status || 'open', options: STATUSES, error: f.status, markOptional: false })}
  ${selectField({ name: 'due', label: 'Due', value: c.due, options: DUE, blank: 'Any time', error: f.overdue ?? f.dueBefore, markOptional: false })}
  ${selectField({ name: 'sort', label: 'Order', value: c.sort || '-createdAt', options: TASK_ORDERS, error: f.sort, markOptional: false })}
  ${button('Filter', 'secondary')}
  ${c.status || c.due || c.sort ? html`<a href="${TASKS_PATH}">Clear</a>` : ''}
</form>`;
}

const NOTICES: Record<string, string> = { added: 'Task added.', done: 'Task marked done.', reopened: 'Task reopened.', saved: 'Task saved.' };

const returnOf = (value: string): TaskReturn => (value === 'timeline' ? 'timeline' : 'tasks');

/** Back to My tasks, or to the timeline of the task's item when the form came from there and the item has a page. */
function backTo(deps: AdminDeps, task: Task, from: TaskReturn, notice?: string): string {
  const page = from === 'timeline' && task.target ? deps.objectHref(task.target.object, task.target.id, task.target.objectSlug) : undefined;
  return page ? `${page}#history` : notice ? `${TASKS_PATH}?notice=${notice}` : TASKS_PATH;
}

const formOf = (task: Task): NewTaskValues => ({ title: task.title, dueDate: task.dueDate?.slice(0, 10) ?? '', assigneeId: task.assigneeId ?? '' });
const EDITED_TASK: EditedItem<Task> = { key: 'task', noun: 'task', labels: ASSIGNED_TASK_LABELS, formOf };

/** Whom a task may be given to: the organization's active users, and its current assignee if no longer active (so saving keeps them). */
async function assigneesFor(deps: AdminDeps, organizationId: string, task: Task): Promise<{ id: string; name: string }[]> {
  const users = await listUsers(deps.ctx.database.db, organizationId);
  return users
    .filter((u) => u.deactivatedAt === null || u.id === task.assigneeId)
    .map((u) => ({ id: u.id, name: u.deactivatedAt === null ? u.name : `${u.name} (deactivated)` }));
}

/**
 * The edit form as PATCH /tasks' body: the assignee only when the form has one and it changed, so that saving a
 * task of a user deactivated since (whom the API no longer lets anyone assign) keeps them.
 */
function taskPatch(form: NewTaskValues, body: ReturnType<typeof formBody>, task: Task): Record<string, unknown> {
  const reassigned = own(body, 'assigneeId') !== undefined && form.assigneeId !== (task.assigneeId ?? '');
  return { ...taskInput(form), ...(reassigned ? { assigneeId: orNull(form.assigneeId) } : {}) };
}

/**
 * Edit a task's title, due date (an empty date clears it) and assignee, saved against `version` (else the task's
 * own); `from` says where saving or cancelling returns to.
 */
async function editPage(
  deps: AdminDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  task: Task,
  from: TaskReturn,
  opts: { form?: NewTaskValues; version?: string | undefined; problem?: FormProblem; status?: number } = {},
) {
  const form = opts.form ?? formOf(task);
  const f = opts.problem?.fields ?? {};
  const assignees = await assigneesFor(deps, viewerOf(request).organization.id, task);
  return deps.render(request, reply, {
    title: `Edit task: ${task.title}`,
    crumbs: ['Data', 'My tasks'],
    status: opts.status,
    body: html`${errorSummary(opts.problem, ASSIGNED_TASK_LABELS)}
<form method="post" action="${TASKS_PATH}/${task.id}/edit" class="form" novalidate>
  ${csrfField(request)}${versionField(opts.version ?? deps.ctx.entityTagger.tagOf(task))}<input type="hidden" name="from" value="${from}">
  ${taskFields(form, f)}
  ${assigneeField(form.assigneeId, assignees, f.assigneeId)}
  <p class="button-row">${button('Save task')} <a class="button button--secondary" href="${backTo(deps, task, from)}">Cancel</a></p>
</form>`,
  });
}

/**
 * Data › My tasks: the tasks assigned to the signed-in user (open ones unless the status control says
 * otherwise, any due day or overdue or due within a week, newest first or soonest due), overdue ones flagged
 * in the organization's time zone, each with "Mark done" or "Reopen" (task.completed or task.updated, channel UI)
 * and "Edit" (title, due date and assignee). Items' timelines use the same buttons (task-actions.views.ts).
 */
export const tasksModule: AdminModule = {
  name: 'tasks',
  nav: [{ section: 'data', label: 'My tasks', href: TASKS_PATH, order: 5, description: 'Open tasks assigned to you.' }],
  register(app, deps) {
    const { ctx } = deps;
    app.get('/data/tasks', async (request, reply) => {
      const viewer = viewerOf(request);
      const timeZone = viewer.organization.timezone;
      const today = localDate(ctx.clock.now(), timeZone);
      const controls: TaskControls = { status: queryText(request, 'status'), due: queryText(request, 'due'), sort: queryText(request, 'sort') };
      const query = { ...tasksQuery(controls, today), assigneeId: viewer.user.id, page: queryPage(request), limit: DEFAULT_LIMIT };
      let problem: FormProblem | undefined;
      let result: Awaited<ReturnType<typeof listTasks>> | undefined;
      let items = new Map<string, RelatedItem>();
      try {
        const errors = validateValue(ListTasksQuery, query, 'query');
        if (errors.length) throw validationFailed(errors);
        result = await listTasks(ctx, viewer.organization, query as ListTasksQuery);
        items = await taskItems(ctx, viewer.organization, result.tasks);
      } catch (err) {
        problem = problemOf(err);
      }
      const params = { status: controls.status || undefined, due: controls.due || undefined, sort: controls.sort || undefined };
      return deps.render(request, reply, {
        title: 'My tasks',
        crumbs: ['Data'],
        status: problem ? 400 : 200,
        notice: NOTICES[queryText(request, 'notice')],
        body: html`<div class="toolbar">${tasksForm(controls, problem)}<a class="button button--primary" href="${TASKS_PATH}/new">New task</a> ${trashLink(TASKS_PATH)}</div>
${result ? html`${dataTable('My tasks', ['Task', 'On', 'Due', 'Created', ''], result.tasks.map((task) => taskRow(deps, request, task, today, timeZone, items)), controls.status || controls.due ? 'No tasks assigned to you match these filters.' : 'No open tasks assigned to you.')}
${pager(TASKS_PATH, params, result.pagination)}` : ''}`,
      });
    });

    for (const [action, status, notice] of [['done', 'done', 'done'], ['reopen', 'open', 'reopened']] as const) {
      app.post<{ Params: { id: string } }>(`/data/tasks/:id/${action}`, async (request, reply) => {
        const viewer = viewerOf(request);
        const task = await inTransaction(ctx, (trx) => updateTask(ctx, trx, callerOfViewer(viewer), request.params.id, { status }));
        return reply.redirect(backTo(deps, task, returnOf(text(formBody(request), 'from')), notice), 303);
      });
    }

    app.get<{ Params: { id: string } }>('/data/tasks/:id/edit', async (request, reply) => {
      const task = await getTask(ctx, viewerOf(request).organization.id, request.params.id);
      return editPage(deps, request, reply, task, returnOf(queryText(request, 'from')));
    });

    app.post<{ Params: { id: string } }>('/data/tasks/:id/edit', async (request, reply) => {
      const viewer = viewerOf(request);
      const body = formBody(request);
      const from = returnOf(text(body, 'from'));
      const form = submittedNewTask(body);
      const version = submittedVersion(body);
      try {
        const current = await getTask(ctx, viewer.organization.id, request.params.id);
        const patch = checkedBody<UpdateTaskBody>(UpdateTaskBody, taskPatch(form, body, current));
        const task = await inTransaction(ctx, (trx) => updateTask(ctx, trx, callerOfViewer(viewer), request.params.id, patch, { ifMatch: version }));
        return reply.redirect(backTo(deps, task, from, 'saved'), 303);
      } catch (err) {
        const conflict = editConflict(ctx, err, EDITED_TASK, form);
        if (conflict) return editPage(deps, request, reply, conflict.item, from, { version: conflict.version, problem: conflict.problem, status: 409 });
        const problem = problemOf(err);
        return editPage(deps, request, reply, await getTask(ctx, viewer.organization.id, request.params.id), from, { form, version, problem, status: 400 });
      }
    });

    registerConsoleTrash(app, deps, {
      route: '/data/tasks',
      href: () => TASKS_PATH,
      title: async () => ({ title: 'Tasks', crumbs: ['Data'] }),
      noun: 'task',
      trash: async (viewer, _params, page) => {
        const { tasks, pagination } = await listTasks(ctx, viewer.organization, { page, limit: DEFAULT_LIMIT, deleted: true } as ListTasksQuery);
        return { items: tasks.map((task) => ({ id: task.id, name: task.title, deletedAt: task.deletedAt })), pagination };
      },
      remove: (trx, caller, _params, id) => deleteTask(ctx, trx, caller, id, false),
      restore: (trx, caller, _params, id) => restoreTask(ctx, trx, caller, id),
      purge: (trx, caller, _params, id) => deleteTask(ctx, trx, caller, id, true, { trashedOnly: true }),
    });
  },
};
