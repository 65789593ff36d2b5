import { inTransaction } from '../../db/transaction.js';
import { localDate } from '../../lib/dates.js';
import { DEFAULT_LIMIT } from '../../lib/pagination.js';
import type { Task } from '../../modules/tasks/tasks.schemas.js';
import { listTasks, updateTask } from '../../modules/tasks/tasks.service.js';
import { actionForm, badge, dataTable, pager } from '../components.js';
import { dayOnly, timeTag } from '../format.js';
import { queryPage, queryText } from '../forms.js';
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
  const overdue = task.dueDate !== null && task.dueDate.slice(0, 10) < today;
  return html`<tr>
  <td>${task.title}</td>
  <td>${targetCell(deps, task)}</td>
  <td>${dayOnly(task.dueDate)}${overdue ? html` ${badge('Overdue', 'bad')}` : ''}</td>
  <td>${timeTag(task.createdAt, timeZone)}</td>
  <td>${actionForm(request, `${TASKS_PATH}/${task.id}/done`, 'Mark done', { accessibleName: `Mark "${task.title}" done` })}</td>
</tr>`;
}

/**
 * Data › My tasks: the open tasks assigned to the signed-in user, newest first, overdue ones flagged in the
 * organization's time zone, each with a "Mark done" button (records task.completed, channel UI).
 */
export const tasksModule: AdminModule = {
  name: 'tasks',
  nav: [{ section: 'data', label: 'My tasks', href: TASKS_PATH, order: 5, description: 'Open tasks assigned to you.' }],
  register(app, deps) {
    const { ctx } = deps;
    app.get('/data/tasks', async (request, reply) => {
      const viewer = viewerOf(request);
      const timeZone = viewer.organization.timezone;
      const query = { assigneeId: viewer.user.id, status: 'open' as const, page: queryPage(request), limit: DEFAULT_LIMIT };
      const { tasks, pagination } = await listTasks(ctx, viewer.organization, query);
      const today = localDate(ctx.clock.now(), timeZone);
      return deps.render(request, reply, {
        title: 'My tasks',
        crumbs: ['Data'],
        notice: queryText(request, 'notice') === 'done' ? 'Task marked done.' : undefined,
        body: html`${dataTable('My open tasks', ['Task', 'On', 'Due', 'Created', ''], tasks.map((task) => taskRow(deps, request, task, today, timeZone)), 'No open tasks assigned to you.')}
${pager(TASKS_PATH, {}, pagination)}`,
      });
    });

    app.post<{ Params: { id: string } }>('/data/tasks/:id/done', async (request, reply) => {
      const viewer = viewerOf(request);
      await inTransaction(ctx, (trx) => updateTask(ctx, trx, callerOfViewer(viewer), request.params.id, { status: 'done' }));
      return reply.redirect(`${TASKS_PATH}?notice=done`, 303);
    });
  },
};
