import type { FastifyReply, FastifyRequest } from 'fastify';
import { inTransaction } from '../../db/transaction.js';
import type { ItemTarget } from '../../modules/shared/item-target.js';
import { CreateTaskBody } from '../../modules/tasks/tasks.schemas.js';
import { createTask } from '../../modules/tasks/tasks.service.js';
import { errorSummary } from '../components.js';
import { pageNotFound } from '../errors.js';
import { checkedBody, formBody, problemOf, text, type FormProblem } from '../forms.js';
import { html } from '../html.js';
import { callerOfViewer, viewerOf, type AdminDeps, type AdminModule } from '../module.js';
import { activePeople } from './detail.views.js';
import { submittedTarget } from './item-target-fields.js';
import { TASKS_PATH } from './task-actions.views.js';
import { blankNewTask, NEW_TASK_LABELS, newTaskForm, newTaskInput, submittedNewTask, type NewTaskValues } from './task-form.views.js';

/** The add form on a page of its own: a task on no item (from My tasks), or one an item's timeline form could not add. */
async function newTaskPage(
  deps: AdminDeps,
  request: FastifyRequest,
  reply: FastifyReply,
  opts: { target?: ItemTarget | undefined; back: string; values: NewTaskValues; problem?: FormProblem; status?: number },
) {
  const assignees = await activePeople(deps.ctx.database.db, viewerOf(request).organization.id);
  return deps.render(request, reply, {
    title: opts.target ? 'Add task' : 'New task',
    crumbs: opts.target ? ['Data'] : ['Data', 'My tasks'],
    status: opts.status,
    body: html`${errorSummary(opts.problem, NEW_TASK_LABELS)}
${newTaskForm(request, { target: opts.target, assignees, values: opts.values, errors: opts.problem?.fields ?? {} })}
<p><a href="${opts.back}">${opts.target ? 'Back to the item' : 'Back to My tasks'}</a></p>`,
  });
}

/**
 * The "Add task" form of every item's timeline, and My tasks' "New task" page (a task need not be on an item), post
 * here: the task is created through the same service as POST /tasks (its checks, task.created with channel UI, the
 * task.due reminder), then the item's page or My tasks says "Task added.". A refused task (no title, a day that
 * doesn't exist, an item gone meanwhile) comes back on a page of its own with what was typed kept.
 */
export const taskCreateModule: AdminModule = {
  name: 'task-create',
  nav: [],
  register(app, deps) {
    const { ctx } = deps;
    app.get('/data/tasks/new', (request, reply) => newTaskPage(deps, request, reply, { back: TASKS_PATH, values: blankNewTask(request) }));

    app.post('/data/tasks', async (request, reply) => {
      const viewer = viewerOf(request);
      const body = formBody(request);
      const values = submittedNewTask(body);
      const target = text(body, 'object') ? submittedTarget(body) : undefined;
      const page = target ? deps.objectHref(target.object, target.id, target.objectSlug) : TASKS_PATH;
      if (!page) throw pageNotFound();
      try {
        const input = checkedBody<CreateTaskBody>(CreateTaskBody, newTaskInput(values, target));
        await inTransaction(ctx, (trx) => createTask(ctx, trx, callerOfViewer(viewer), input));
        return reply.redirect(target ? `${page}?notice=taskAdded#history` : `${TASKS_PATH}?notice=added`, 303);
      } catch (err) {
        const problem = problemOf(err, { fieldOf: (field) => (field.startsWith('target') ? 'target' : field) });
        return newTaskPage(deps, request, reply, { target, back: page, values, problem, status: 400 });
      }
    });
  },
};
