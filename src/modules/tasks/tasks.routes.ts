import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { inTransaction } from '../../db/transaction.js';
import { callerOf, requirePrincipal } from '../../http/auth.js';
import { createdReply, IdempotencyHeaders } from '../idempotency/idempotent-route.js';
import { IdParams, ok } from '../../http/schemas.js';
import { registerTrashRoutes } from '../shared/trash.routes.js';
import { ifMatchOf } from '../../http/entity-tags.js';
import { CreateTaskBody, ListTasksQuery, TaskEnvelope, WrittenTaskEnvelope, TaskListEnvelope, UpdateTaskBody } from './tasks.schemas.js';
import { createTask, deleteTask, getTask, listTasks, restoreTask, updateTask } from './tasks.service.js';

const tags = ['Tasks'];

export function registerTaskRoutes(parent: FastifyInstance, ctx: AppContext): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/tasks', {
    config: { auth: { anyOf: ['tasks:read'] } },
    schema: {
      tags,
      summary: 'List tasks',
      description:
        'Newest first, or in `sort` (`dueDate`: soonest due first, undated last); `after` walks with cursors. Filters: `status`, `assigneeId`, `targetId` (the tasks on one item), `targetObject`, `dueBefore`/`dueAfter` (exclusive days), `overdue=true` (open tasks due before the organization\'s local today), the time ranges. The tasks on an item in the trash are hidden until it is restored.',
      querystring: ListTasksQuery,
      response: { 200: TaskListEnvelope },
    },
    handler: async (request) => ok(await listTasks(ctx, requirePrincipal(request).organization, request.query)),
  });

  app.post('/tasks', {
    config: { auth: { anyOf: ['tasks:write'] }, idempotent: true, etag: 'task' },
    schema: {
      tags,
      summary: 'Create a task',
      description: 'A to-do, optionally on a live lead, account, deal or record of the organization (else 400 naming `target.id`) and for a user (`assigneeId`); an open task with a `dueDate` gets a task.due reminder at 09:00 in the organization\'s time zone on that day. Records task.created. Send Idempotency-Key to make retries safe.',
      headers: IdempotencyHeaders,
      body: CreateTaskBody,
      response: { 201: TaskEnvelope },
    },
    handler: async (request, reply) => {
      const caller = callerOf(request);
      return createdReply(ctx, request, reply, async (trx) => ok({ task: await createTask(ctx, trx, caller, request.body) }));
    },
  });

  app.get('/tasks/:id', {
    config: { auth: { anyOf: ['tasks:read'] }, etag: 'task' },
    schema: { tags, summary: 'Get a task', params: IdParams, response: { 200: TaskEnvelope } },
    handler: async (request) => ok({ task: await getTask(ctx, requirePrincipal(request).organization.id, request.params.id) }),
  });

  app.patch('/tasks/:id', {
    config: { auth: { anyOf: ['tasks:write'] }, etag: 'task', ifMatch: true },
    schema: {
      tags,
      summary: 'Update a task',
      description: 'Only the fields sent change. Sending `status: done` to an open task records task.completed; other changes task.updated.',
      params: IdParams,
      body: UpdateTaskBody,
      response: { 200: WrittenTaskEnvelope },
    },
    handler: async (request) => {
      const caller = callerOf(request);
      return ok({ task: await inTransaction(ctx, (trx) => updateTask(ctx, trx, caller, request.params.id, request.body, { ifMatch: ifMatchOf(request) })) });
    },
  });

  registerTrashRoutes<{ id: string }>(app, ctx, {
    path: '/tasks/:id',
    params: IdParams,
    scope: 'tasks:write',
    tags,
    noun: 'task',
    envelope: WrittenTaskEnvelope,
    remove: (trx, caller, { id }, permanent, opts) => deleteTask(ctx, trx, caller, id, permanent, opts),
    restore: (trx, caller, { id }, opts) => restoreTask(ctx, trx, caller, id, opts),
  });
}
