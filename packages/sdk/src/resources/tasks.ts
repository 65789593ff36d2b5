import type { Core } from '../core.js';
import type { CallOptions, CreateOptions, Query, RequestBody, ResponseData, Schema, Written } from '../types.js';
import { listing } from './listing.js';
import { trashing } from './trash.js';

const TASKS = '/api/public/v1/tasks';
const TASK = '/api/public/v1/tasks/{id}';
const RESTORE = '/api/public/v1/tasks/{id}/restore';

export type Task = Schema<'Task'>;
export type TaskCreate = RequestBody<typeof TASKS, 'post'>;
export type TaskUpdate = RequestBody<typeof TASK, 'patch'>;
export type TaskQuery = Query<typeof TASKS, 'get'>;
export type TaskPage = ResponseData<typeof TASKS, 'get'>;

/** To-dos, optionally on an item and for a user, with a date-only due day (task.due at 09:00 local). */
export function tasksResource(core: Core) {
  return {
    create: async (body: TaskCreate, opts?: CreateOptions): Promise<Task> => (await core.create(TASKS, body, opts)).task,
    get: async (id: string, opts?: CallOptions): Promise<Task> => (await core.call(TASK, 'get', { params: { id } }, opts)).task,
    update: async (id: string, patch: TaskUpdate, opts?: CallOptions): Promise<Written<Task>> => (await core.call(TASK, 'patch', { params: { id }, body: patch }, opts)).task,
    /** Marks the task done (records task.completed). */
    complete: async (id: string, opts?: CallOptions): Promise<Written<Task>> => (await core.call(TASK, 'patch', { params: { id }, body: { status: 'done' } }, opts)).task,
    ...listing((query: TaskQuery, opts?: CallOptions) => core.call(TASKS, 'get', { query }, opts), (page) => page.tasks),
    ...trashing<Written<Task>>(
      async (id, query, opts) => (await core.call(TASK, 'delete', { params: { id }, query }, opts)).task,
      async (id, opts) => (await core.call(RESTORE, 'post', { params: { id } }, opts)).task,
    ),
  };
}
