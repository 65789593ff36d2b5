import { inTransaction } from '../../db/transaction.js';
import { validationFailed } from '../../errors.js';
import { validateValue } from '../../http/validation.js';
import { addDays, localDate } from '../../lib/dates.js';
import { DEFAULT_LIMIT } from '../../lib/pagination.js';
import { ListTasksQuery, type Task } from '../../modules/tasks/tasks.schemas.js';
import { listTasks, updateTask } from '../../modules/tasks/tasks.service.js';
import { actionForm, badge, button, dataTable, pager, selectField, type Option } from '../components.js';
import { dayOnly, timeTag } from '../format.js';
import { problemOf, queryPage, queryText, type FormProblem } from '../forms.js';
import { TIME_CONSOLE_SORTS } from '../list-controls.js';
import { html, type SafeHtml } from '../html.js';
import { callerOfViewer, viewerOf, type AdminDeps, type AdminModule } from '../module.js';
import type { FastifyRequest } from 'fastify';

export const TASKS_PATH = '/admin/data/tasks';

/** Where a task's item is shown in the console (a link), or its kind and id when no page shows it. */
function targetCell(deps: AdminDeps, task: Task): SafeHtml | string {
  if (!task.target) return html`<span class="muted">—</span>`;
  const page = deps.objectHref(task.target.object, task.target.id, task.target.objectSlug);
  const label = `${task.target.objectSlug ?? task.target.object} ${task.target.id.slice(-6)}`;
  return page ? html`<a href="${page}">${label}</a>` : label;
}

function taskRow(deps: AdminDeps, request: FastifyRequest, task: Task, today: string, timeZone: string): SafeHtml {
  const overdue = task.status === 'open' && task.dueDate !== null && task.dueDate.slice(0, 10) < today;
  return html`<tr>
  <td>${task.title}</td>
  <td>${targetCell(deps, task)}</td>
  <td>${dayOnly(task.dueDate)}${overdue ? html` ${badge('Overdue', 'bad')}` : ''}</td>
  <td>${timeTag(task.createdAt, timeZone)}</td>
  <td>${task.status === 'open' ? actionForm(request, `${TASKS_PATH}/${task.id}/done`, 'Mark done', { accessibleName: `Mark "${task.title}" done` }) : badge('Done')}</td>
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

/**
 * Data › My tasks: the tasks assigned to the signed-in user (open ones unless the status control says
 * otherwise, any due day or overdue or due within a week, newest first or soonest due), overdue ones flagged
 * in the organization's time zone, each open one with a "Mark done" button (records task.completed, channel UI).
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
      try {
        const errors = validateValue(ListTasksQuery, query, 'query');
        if (errors.length) throw validationFailed(errors);
        result = await listTasks(ctx, viewer.organization, query as ListTasksQuery);
      } catch (err) {
        problem = problemOf(err);
      }
      const params = { status: controls.status || undefined, due: controls.due || undefined, sort: controls.sort || undefined };
      return deps.render(request, reply, {
        title: 'My tasks',
        crumbs: ['Data'],
        status: problem ? 400 : 200,
        notice: queryText(request, 'notice') === 'done' ? 'Task marked done.' : undefined,
        body: html`<div class="toolbar">${tasksForm(controls, problem)}</div>
${result ? html`${dataTable('My tasks', ['Task', 'On', 'Due', 'Created', ''], result.tasks.map((task) => taskRow(deps, request, task, today, timeZone)), controls.status || controls.due ? 'No tasks assigned to you match these filters.' : 'No open tasks assigned to you.')}
${pager(TASKS_PATH, params, result.pagination)}` : ''}`,
      });
    });

    app.post<{ Params: { id: string } }>('/data/tasks/:id/done', async (request, reply) => {
      const viewer = viewerOf(request);
      await inTransaction(ctx, (trx) => updateTask(ctx, trx, callerOfViewer(viewer), request.params.id, { status: 'done' }));
      return reply.redirect(`${TASKS_PATH}?notice=done`, 303);
    });
  },
};
