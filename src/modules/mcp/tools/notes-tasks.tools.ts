import { Type } from '@sinclair/typebox';
import { inTransaction } from '../../../db/transaction.js';
import { AppError, validationFailed } from '../../../errors.js';
import { StringEnum } from '../../../http/schemas.js';
import { CreateNoteBody, ListNotesQuery, UpdateNoteBody } from '../../notes/notes.schemas.js';
import { createNote, deleteNote, getNote, listNotes, restoreNote, updateNote } from '../../notes/notes.service.js';
import type { Scope } from '../../orgs/principal.js';
import { SLUG_PATTERN } from '../../objects/objects.schemas.js';
import { slugErrors, TARGET_OBJECTS } from '../../shared/item-target.js';
import { CreateTaskBody, ListTasksQuery, UpdateTaskBody } from '../../tasks/tasks.schemas.js';
import { createTask, deleteTask, getTask, listTasks, restoreTask, updateTask } from '../../tasks/tasks.service.js';
import { TimelineQuery } from '../../timeline/timeline.schemas.js';
import { readTimeline } from '../../timeline/timeline.service.js';
import { defineCreateTool, defineTool, deleteDescription, DeleteInput, GetInput, IdArg, IfMatchArg, PAGING_HELP, RestoreInput, restoreDescription, UpdateInput } from '../mcp.tool.js';

const READ_SCOPE: Record<(typeof TARGET_OBJECTS)[number], Scope> = { lead: 'leads:read', account: 'accounts:read', deal: 'deals:read', record: 'records:read' };

const TARGET_HELP = '`target`: `{object: "lead" | "account" | "deal" | "record", id}`, plus `objectSlug` for a record; the item must exist and not be deleted.';

export const noteTaskTools = [
  defineCreateTool({
    name: 'add_note',
    title: 'Add a note',
    description: `Write a markdown note (a call summary, a meeting outcome) on a lead, account, deal or record. ${TARGET_HELP}`,
    scopes: ['notes:write'],
    input: CreateNoteBody,
    rest: (input) => ({ path: '/notes', body: input }),
    create: async ({ ctx, caller }, trx, input) => ({ note: await createNote(ctx, trx, caller, input) }),
  }),
  defineCreateTool({
    name: 'create_task',
    title: 'Create a task',
    description: `Create a to-do, optionally on an item (${TARGET_HELP}) and for a user (\`assigneeId\`). \`dueDate\` is a day, YYYY-MM-DD: the task is overdue after that day in the organization's time zone, and a reminder goes out at 09:00 on it.`,
    scopes: ['tasks:write'],
    input: CreateTaskBody,
    rest: (input) => ({ path: '/tasks', body: input }),
    create: async ({ ctx, caller }, trx, input) => ({ task: await createTask(ctx, trx, caller, input) }),
  }),
  defineTool({
    name: 'get_note',
    title: 'Get a note',
    description: 'One note by id: its markdown body, its target (the lead, account, deal or record it is on) and times.',
    scopes: ['notes:read'],
    readOnly: true,
    input: GetInput('Note'),
    etag: 'note',
    run: async ({ ctx, organizationId }, { id }) => ({ note: await getNote(ctx, organizationId, id) }),
  }),
  defineTool({
    name: 'get_task',
    title: 'Get a task',
    description: 'One task by id: its title, status, due date, assignee, target (the item it is on, if any) and times.',
    scopes: ['tasks:read'],
    readOnly: true,
    input: GetInput('Task'),
    etag: 'task',
    run: async ({ ctx, organizationId }, { id }) => ({ task: await getTask(ctx, organizationId, id) }),
  }),
  defineTool({
    name: 'update_note',
    title: 'Edit a note',
    description: 'Replace the markdown body of a note (`changes: {body}`), e.g. to fix a typo; records note.updated. A note keeps its target: to move it, add a new note and delete this one.',
    bodyAt: 'changes',
    scopes: ['notes:write'],
    readOnly: false,
    input: UpdateInput('Note', UpdateNoteBody),
    etag: 'note',
    run: async ({ ctx, caller }, { id, changes, ifMatch }) => ({ note: await inTransaction(ctx, (trx) => updateNote(ctx, trx, caller, id, changes, { ifMatch })) }),
  }),
  defineTool({
    name: 'update_task',
    title: 'Update a task',
    description:
      "Change some fields of a task: only the fields in `changes` are written; null clears `target`, `dueDate` or `assigneeId`. Retitle with `title`, reschedule with `dueDate` (YYYY-MM-DD; the reminder moves with it), reassign with `assigneeId` (a user id, see list_users), reopen a done task with `status: \"open\"`. `status: \"done\"` records task.completed (as complete_task), any other change task.updated.",
    bodyAt: 'changes',
    scopes: ['tasks:write'],
    readOnly: false,
    input: UpdateInput('Task', UpdateTaskBody),
    etag: 'task',
    run: async ({ ctx, caller }, { id, changes, ifMatch }) => ({ task: await inTransaction(ctx, (trx) => updateTask(ctx, trx, caller, id, changes, { ifMatch })) }),
  }),
  defineTool({
    name: 'complete_task',
    title: 'Complete a task',
    description: 'Mark a task done (records task.completed). Completing a task that is already done changes nothing.',
    scopes: ['tasks:write'],
    readOnly: false,
    input: Type.Object({ id: IdArg('Task'), ifMatch: Type.Optional(IfMatchArg('Task')) }, { additionalProperties: false }),
    etag: 'task',
    run: async ({ ctx, caller }, { id, ifMatch }) => ({ task: await inTransaction(ctx, (trx) => updateTask(ctx, trx, caller, id, { status: 'done' }, { ifMatch })) }),
  }),
  defineTool({
    name: 'delete_note',
    title: 'Delete a note',
    description: deleteDescription('note'),
    scopes: ['notes:write'],
    readOnly: false,
    destructive: true,
    input: DeleteInput('Note'),
    etag: 'note',
    run: async ({ ctx, caller }, { id, permanent, ifMatch }) => ({ note: await inTransaction(ctx, (trx) => deleteNote(ctx, trx, caller, id, permanent === true, { ifMatch })) }),
  }),
  defineTool({
    name: 'restore_note',
    title: 'Restore a note',
    description: restoreDescription('note', 'list_notes'),
    scopes: ['notes:write'],
    readOnly: false,
    input: RestoreInput('Note'),
    etag: 'note',
    run: async ({ ctx, caller }, { id, ifMatch }) => ({ note: await inTransaction(ctx, (trx) => restoreNote(ctx, trx, caller, id, { ifMatch })) }),
  }),
  defineTool({
    name: 'delete_task',
    title: 'Delete a task',
    description: deleteDescription('task'),
    scopes: ['tasks:write'],
    readOnly: false,
    destructive: true,
    input: DeleteInput('Task'),
    etag: 'task',
    run: async ({ ctx, caller }, { id, permanent, ifMatch }) => ({ task: await inTransaction(ctx, (trx) => deleteTask(ctx, trx, caller, id, permanent === true, { ifMatch })) }),
  }),
  defineTool({
    name: 'restore_task',
    title: 'Restore a task',
    description: restoreDescription('task', 'search_tasks'),
    scopes: ['tasks:write'],
    readOnly: false,
    input: RestoreInput('Task'),
    etag: 'task',
    run: async ({ ctx, caller }, { id, ifMatch }) => ({ task: await inTransaction(ctx, (trx) => restoreTask(ctx, trx, caller, id, { ifMatch })) }),
  }),
  defineTool({
    name: 'list_notes',
    title: 'List notes',
    description: `Notes, newest first: \`targetId\` (the notes on one item), \`targetObject\` (lead, account, deal, record), \`createdAfter\`/\`updatedAfter\` (and …Before, ISO instants). \`sort\`: -createdAt, createdAt, -updatedAt, updatedAt. ${PAGING_HELP}`,
    scopes: ['notes:read'],
    readOnly: true,
    input: ListNotesQuery,
    run: ({ ctx, organizationId }, input) => listNotes(ctx, organizationId, input),
  }),
  defineTool({
    name: 'search_tasks',
    title: 'Search tasks',
    description:
      `Tasks, newest first: filter by \`status\` (open, done), \`assigneeId\`, \`targetId\` (the tasks on one item), \`targetObject\`, \`dueBefore\`/\`dueAfter\` (YYYY-MM-DD, exclusive), \`overdue: true\` (open tasks due before the organization's local today), \`createdAfter\`/\`updatedAfter\` (and …Before). \`sort\`: dueDate (soonest first, undated last), -dueDate, -createdAt, createdAt, -updatedAt, updatedAt. ${PAGING_HELP}`,
    scopes: ['tasks:read'],
    readOnly: true,
    input: ListTasksQuery,
    run: ({ ctx, principal }, input) => listTasks(ctx, principal.organization, input),
  }),
  defineTool({
    name: 'get_timeline',
    title: "Get an item's timeline",
    description:
      "The history of a lead, account, deal or record, newest first: its events (created, updated, stage changes…), its notes and its tasks (when the key may read notes and tasks). `types` keeps some of them (comma-separated: `event`, `note`, `task`, e.g. `note,task`); `createdAfter`/`createdBefore` (ISO instants, strict) bound the entries' `at`. Pass `pagination.nextCursor` back as `after` for older entries (same filters). Needs the item's read scope.",
    scopes: Object.values(READ_SCOPE),
    readOnly: true,
    input: Type.Object(
      {
        object: StringEnum(TARGET_OBJECTS, { description: 'The kind of item.' }),
        id: IdArg('Item'),
        objectSlug: Type.Optional(Type.String({ pattern: SLUG_PATTERN, description: "The record's object slug: required for a record, refused for the others." })),
        ...TimelineQuery.properties,
      },
      { additionalProperties: false },
    ),
    run: async ({ ctx, principal }, { object, id, objectSlug, ...query }) => {
      const scope = READ_SCOPE[object];
      if (!principal.key.scopes.includes(scope)) throw new AppError('INSUFFICIENT_SCOPE', `This key lacks the scope ${scope}`);
      const slug = slugErrors({ object, objectSlug }, 'objectSlug');
      if (slug.length) throw validationFailed(slug);
      return readTimeline(ctx, principal, { object, id, ...(objectSlug !== undefined ? { objectSlug } : {}) }, query);
    },
  }),
];
