import { Type, type Static } from '@sinclair/typebox';
import { Envelope, Id, Nullable, StringEnum, Timestamp } from '../../http/schemas.js';
import { Pagination } from '../../lib/pagination.js';
import { ListParams, SortQuery, TIME_SORTS } from '../../lib/list-request.js';
import { DeletedAt, TrashQuery } from '../shared/trash.routes.js';
import { ItemTarget, TARGET_OBJECTS } from '../shared/item-target.js';
import { WrittenEnvelope } from '../shared/minimal-view.js';

export const TASK_STATUSES = ['open', 'done'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

const DUE_RULES =
  'Date-only: YYYY-MM-DD, or a timestamp with Z or an offset kept as the nearest UTC day (the date rules of custom fields). Returned as ' +
  'YYYY-MM-DDT00:00:00.000Z. An open task is overdue once the organization\'s local date is after it; task.due fires at 09:00 local time on the day.';

const title = Type.String({ minLength: 1, maxLength: 500, pattern: '\\S', description: 'What is to be done.' });
const writable = {
  target: Nullable(ItemTarget),
  dueDate: Nullable(Type.String({ maxLength: 64, description: DUE_RULES })),
  assigneeId: Nullable(Id('User of this organization who is to do it.')),
  status: StringEnum(TASK_STATUSES, { description: '`open` (the default) or `done`; moving to done records task.completed.' }),
};

export const CreateTaskBody = Type.Composite([Type.Object({ title }), Type.Partial(Type.Object(writable))], {
  additionalProperties: false,
  examples: [{ title: 'Send the proposal', target: { object: 'deal', id: '6740a1b2c3d4e5f6a7b8c9d0' }, dueDate: '2026-12-01' }],
});
export type CreateTaskBody = Static<typeof CreateTaskBody>;

export const UpdateTaskBody = Type.Partial(Type.Object({ title, ...writable }), {
  additionalProperties: false,
  minProperties: 1,
  description: 'Only the fields sent change; null clears target, dueDate or assigneeId.',
});
export type UpdateTaskBody = Static<typeof UpdateTaskBody>;

export const Task = Type.Object(
  {
    id: Id(),
    title: Type.String(),
    target: Nullable(ItemTarget),
    dueDate: Nullable(Type.String({ format: 'date-time', description: 'Date-only, as YYYY-MM-DDT00:00:00.000Z.' })),
    assigneeId: Nullable(Type.String()),
    status: StringEnum(TASK_STATUSES),
    completedAt: Nullable(Timestamp('When the task was last marked done; null while open.')),
    createdAt: Timestamp('UTC instant of creation.'),
    updatedAt: Timestamp('UTC instant of the last change.'),
    deletedAt: DeletedAt,
  },
  { $id: 'Task' },
);
export type Task = Static<typeof Task>;

/** `dueDate`: soonest due first, tasks without a due day last (`-dueDate` the reverse). */
export const TASK_SORTS = [...TIME_SORTS, 'dueDate', '-dueDate'] as const;

export const ListTasksQuery = Type.Object(
  {
    status: Type.Optional(StringEnum(TASK_STATUSES, { description: 'Only open or only done tasks.' })),
    assigneeId: Type.Optional(Id('Only the tasks of this user.')),
    targetId: Type.Optional(Id('Only the tasks on this item.')),
    targetObject: Type.Optional(StringEnum(TARGET_OBJECTS, { description: 'Only the tasks on items of this kind.' })),
    dueBefore: Type.Optional(Type.String({ format: 'date', description: 'Only tasks due before this day (YYYY-MM-DD, exclusive).' })),
    dueAfter: Type.Optional(Type.String({ format: 'date', description: 'Only tasks due after this day (YYYY-MM-DD, exclusive).' })),
    overdue: Type.Optional(Type.Boolean({ description: 'true: only open tasks whose due date is before the organization\'s local today.' })),
    ...ListParams,
    ...SortQuery(TASK_SORTS),
    ...TrashQuery,
  },
  { additionalProperties: false },
);
export type ListTasksQuery = Static<typeof ListTasksQuery>;

export const TaskEnvelope = Envelope(Type.Object({ task: Type.Ref(Task) }));
/** The answer of a write of an existing task (update, delete, restore): the task, or its minimal view. */
export const WrittenTaskEnvelope = WrittenEnvelope('task', Type.Ref(Task));
export const TaskListEnvelope = Envelope(Type.Object({ tasks: Type.Array(Type.Ref(Task)), pagination: Type.Ref(Pagination) }));
