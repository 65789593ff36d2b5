import type { FastifyRequest } from 'fastify';
import type { Task } from '../../modules/tasks/tasks.schemas.js';
import { button, csrfField } from '../components.js';
import { html, type SafeHtml } from '../html.js';
import { deleteButton } from './trash.pages.js';

export const TASKS_PATH = '/admin/data/tasks';

/** Where a task form sends the user back to: My tasks, or the timeline of the task's item. */
export type TaskReturn = 'tasks' | 'timeline';

/**
 * A task's buttons wherever the console lists it (My tasks, an item's timeline): mark done or reopen (a form,
 * with the session's CSRF token), edit its title and due date, and delete it (to the tasks' Trash page).
 */
export function taskActions(request: FastifyRequest, task: Task, from: TaskReturn): SafeHtml {
  const [action, label] = task.status === 'open' ? ['done', 'Mark done'] : ['reopen', 'Reopen'];
  return html`<div class="button-row"><form method="post" action="${TASKS_PATH}/${task.id}/${action}" class="inline-form">${csrfField(request)}<input type="hidden" name="from" value="${from}">${button(
    html`${label}<span class="visually-hidden"> "${task.title}"</span>`,
    'secondary',
  )}</form>
<a class="button button--secondary" href="${TASKS_PATH}/${task.id}/edit?from=${from}">Edit<span class="visually-hidden"> "${task.title}"</span></a>
${deleteButton(request, TASKS_PATH, task.id, `the task "${task.title}"`)}</div>`;
}
