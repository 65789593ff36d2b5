import type { FastifyRequest } from 'fastify';
import type { ItemTarget } from '../../modules/shared/item-target.js';
import { button, csrfField, selectField, textField } from '../components.js';
import { orNull, text, type FieldMessages, type FormBody } from '../forms.js';
import { html, type SafeHtml } from '../html.js';
import { targetFields } from './item-target-fields.js';
import { TASKS_PATH } from './task-actions.views.js';

/** The inputs every task form has (add, edit), named as the API's fields so its messages land next to them. */
export const TASK_LABELS = { title: 'Title', dueDate: 'Due date' };
export type TaskFormValues = Record<keyof typeof TASK_LABELS, string>;

/** The inputs with the assignee (the edit form's), and the add form's with the item it is for, as their error summaries name them. */
export const ASSIGNED_TASK_LABELS = { ...TASK_LABELS, assigneeId: 'Assignee' };
export const NEW_TASK_LABELS = { ...ASSIGNED_TASK_LABELS, target: 'Item' };
export type NewTaskValues = TaskFormValues & { assigneeId: string };

/** Title and due date. The due date is a calendar day (the API's date-only rule), so no time zone applies to it. */
export function taskFields(values: TaskFormValues, errors: FieldMessages): SafeHtml {
  return html`${textField({ name: 'title', label: TASK_LABELS.title, value: values.title, error: errors.title, required: true, maxLength: 500 })}
  ${textField({ name: 'dueDate', label: TASK_LABELS.dueDate, type: 'date', value: values.dueDate, error: errors.dueDate, hint: 'Leave empty for no due date.' })}`;
}

/** The assignee: one of `assignees` (the organization's active users, and the current one if no longer active), or none. */
export function assigneeField(value: string, assignees: readonly { id: string; name: string }[], error: string | undefined): SafeHtml {
  const options = assignees.map((p) => ({ value: p.id, label: p.name }));
  return selectField({ name: 'assigneeId', label: ASSIGNED_TASK_LABELS.assigneeId, value, options, blank: 'Unassigned', error });
}

/** Title and due date as the API's body: an empty date is no due date. */
export function taskInput(values: TaskFormValues): { title: string; dueDate: string | null } {
  return { title: values.title, dueDate: values.dueDate === '' ? null : values.dueDate };
}

function submittedTask(body: FormBody): TaskFormValues {
  return { title: text(body, 'title'), dueDate: text(body, 'dueDate') };
}

export function submittedNewTask(body: FormBody): NewTaskValues {
  return { ...submittedTask(body), assigneeId: text(body, 'assigneeId') };
}

/** The add form as POST /tasks' body: an empty assignee leaves the task unassigned. */
export function newTaskInput(values: NewTaskValues, target: ItemTarget | undefined): Record<string, unknown> {
  return { ...taskInput(values), assigneeId: orNull(values.assigneeId), ...(target ? { target } : {}) };
}

/** A blank add form: for the signed-in user, as "My tasks" lists them. */
export const blankNewTask = (request: FastifyRequest): NewTaskValues => ({ title: '', dueDate: '', assigneeId: request.viewer?.user.id ?? '' });

/**
 * The "Add task" form, on an item's timeline (`target`, its inputs grouped under `legend`) or on a page of its own:
 * title, due day and assignee (an active user of the organization, or unassigned), posted like POST /tasks (channel UI).
 */
export function newTaskForm(
  request: FastifyRequest,
  opts: { target?: ItemTarget | undefined; assignees: readonly { id: string; name: string }[]; values: NewTaskValues; errors?: FieldMessages; legend?: string },
): SafeHtml {
  const f = opts.errors ?? {};
  const inputs = html`${taskFields(opts.values, f)}
  ${assigneeField(opts.values.assigneeId, opts.assignees, f.assigneeId)}`;
  return html`<form method="post" action="${TASKS_PATH}" class="form" novalidate>
  ${csrfField(request)}${opts.target ? targetFields(opts.target) : ''}
  ${opts.legend ? html`<fieldset class="field"><legend>${opts.legend}</legend>${inputs}</fieldset>` : inputs}
  ${button('Add task')}
</form>`;
}
