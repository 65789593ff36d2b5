import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { inTransaction } from '../../db/transaction.js';
import { callerOf, requirePrincipal } from '../../http/auth.js';
import { createdReply, IdempotencyHeaders } from '../idempotency/idempotent-route.js';
import { IdParams, ok } from '../../http/schemas.js';
import { registerTrashRoutes } from '../shared/trash.routes.js';
import { ifMatchOf } from '../../http/entity-tags.js';
import { CreateNoteBody, ListNotesQuery, NoteEnvelope, WrittenNoteEnvelope, NoteListEnvelope, UpdateNoteBody } from './notes.schemas.js';
import { createNote, deleteNote, getNote, listNotes, restoreNote, updateNote } from './notes.service.js';

const tags = ['Notes'];

export function registerNoteRoutes(parent: FastifyInstance, ctx: AppContext): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/notes', {
    config: { auth: { anyOf: ['notes:read'] } },
    schema: { tags, summary: 'List notes', description: 'Newest first, or in `sort`; `after` walks with cursors. `targetId` lists the notes on one item, `targetObject` those on one kind of item. The notes on an item in the trash are hidden until it is restored.', querystring: ListNotesQuery, response: { 200: NoteListEnvelope } },
    handler: async (request) => ok(await listNotes(ctx, requirePrincipal(request).organization.id, request.query)),
  });

  app.post('/notes', {
    config: { auth: { anyOf: ['notes:write'] }, idempotent: true, etag: 'note' },
    schema: {
      tags,
      summary: 'Add a note',
      description: 'Adds a markdown note to a live lead, account, deal or record of the organization (else 400 naming `target.id`); records note.created. Send Idempotency-Key to make retries safe.',
      headers: IdempotencyHeaders,
      body: CreateNoteBody,
      response: { 201: NoteEnvelope },
    },
    handler: async (request, reply) => {
      const caller = callerOf(request);
      return createdReply(ctx, request, reply, async (trx) => ok({ note: await createNote(ctx, trx, caller, request.body) }));
    },
  });

  app.get('/notes/:id', {
    config: { auth: { anyOf: ['notes:read'] }, etag: 'note' },
    schema: { tags, summary: 'Get a note', params: IdParams, response: { 200: NoteEnvelope } },
    handler: async (request) => ok({ note: await getNote(ctx, requirePrincipal(request).organization.id, request.params.id) }),
  });

  app.patch('/notes/:id', {
    config: { auth: { anyOf: ['notes:write'] }, etag: 'note', ifMatch: true },
    schema: { tags, summary: 'Edit a note', description: 'Replaces the body; records note.updated.', params: IdParams, body: UpdateNoteBody, response: { 200: WrittenNoteEnvelope } },
    handler: async (request) => {
      const caller = callerOf(request);
      return ok({ note: await inTransaction(ctx, (trx) => updateNote(ctx, trx, caller, request.params.id, request.body, { ifMatch: ifMatchOf(request) })) });
    },
  });

  registerTrashRoutes<{ id: string }>(app, ctx, {
    path: '/notes/:id',
    params: IdParams,
    scope: 'notes:write',
    tags,
    noun: 'note',
    envelope: WrittenNoteEnvelope,
    remove: (trx, caller, { id }, permanent, opts) => deleteNote(ctx, trx, caller, id, permanent, opts),
    restore: (trx, caller, { id }, opts) => restoreNote(ctx, trx, caller, id, opts),
  });
}
