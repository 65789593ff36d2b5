import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { inTransaction } from '../../db/transaction.js';
import { callerOf, requirePrincipal } from '../../http/auth.js';
import { createdReply, IdempotencyHeaders } from '../idempotency/idempotent-route.js';
import { ok } from '../../http/schemas.js';
import { ListRecordsQuery, ObjectParams, RecordEnvelope, WrittenRecordEnvelope, RecordInput, RecordListEnvelope, RecordParams, RecordPatch } from './records.schemas.js';
import { registerTrashRoutes } from '../shared/trash.routes.js';
import { ifMatchOf } from '../../http/entity-tags.js';
import { createRecord, deleteRecord, getRecord, listRecords, restoreRecord, updateRecord } from './records.service.js';
import { Type } from '@sinclair/typebox';
import { registerBatchRoutes } from '../shared/batch.routes.js';
import { ObjectRecord } from './records.schemas.js';
import { recordBatch } from './records.batch.js';

const tags = ['Records'];

export function registerRecordRoutes(parent: FastifyInstance, ctx: AppContext): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/objects/:object/records', {
    config: { auth: { anyOf: ['records:read'] } },
    schema: {
      tags,
      summary: 'List records of a custom object',
      description: 'Newest first. `q`: case-insensitive substring of the text fields (trigram index); `stage`; `overdue=true`: due date before the organization\'s local today; `filter[<field>]` (equality) and `filter[<field>][gte|lte|gt|lt]` (number, date, datetime) through a shared value index (the organization\'s own OpenAPI document lists them per object); `sort` on createdAt, updatedAt or a date or number field. Pages by `page` (with a total) or by cursor: pass `pagination.nextCursor` as `after` (no total; same cost at any depth).',
      params: ObjectParams,
      querystring: ListRecordsQuery,
      response: { 200: RecordListEnvelope },
    },
    handler: async (request) => ok(await listRecords(ctx, requirePrincipal(request).organization, request.params.object, request.query)),
  });

  app.post('/objects/:object/records', {
    config: { auth: { anyOf: ['records:write'] }, idempotent: true, etag: 'record' },
    schema: {
      tags,
      summary: 'Create a record',
      description: 'Values are checked against the object\'s definition; one 400 lists every bad field. The stage defaults to the first one. Records record.created. Send Idempotency-Key to make retries safe.',
      headers: IdempotencyHeaders,
      params: ObjectParams,
      body: RecordInput,
      response: { 201: RecordEnvelope },
    },
    handler: async (request, reply) => {
      const caller = callerOf(request);
      return createdReply(ctx, request, reply, async (trx) => ok({ record: await createRecord(ctx, trx, caller, request.params.object, request.body as Record<string, unknown>) }));
    },
  });

  app.get('/objects/:object/records/:id', {
    config: { auth: { anyOf: ['records:read'] }, etag: 'record' },
    schema: { tags, summary: 'Get a record', params: RecordParams, response: { 200: RecordEnvelope } },
    handler: async (request) => ok({ record: await getRecord(ctx, requirePrincipal(request).organization.id, request.params.object, request.params.id) }),
  });

  app.patch('/objects/:object/records/:id', {
    config: { auth: { anyOf: ['records:write'] }, etag: 'record', ifMatch: true },
    schema: {
      tags,
      summary: 'Update a record',
      description: 'Only the keys sent change; null clears a field that is not required. A stage change records record.stage_changed, other changes record.updated.',
      params: RecordParams,
      body: RecordPatch,
      response: { 200: WrittenRecordEnvelope },
    },
    handler: async (request) => {
      const caller = callerOf(request);
      const opts = { ifMatch: ifMatchOf(request) };
      const record = await inTransaction(ctx, (trx) => updateRecord(ctx, trx, caller, request.params.object, request.params.id, request.body as Record<string, unknown>, opts));
      return ok({ record });
    },
  });

  registerBatchRoutes(app, ctx, {
    path: '/objects/:object/records',
    params: ObjectParams,
    scope: 'records:write',
    tags,
    resourceSchema: Type.Ref(ObjectRecord),
    examples: { create: { title: 'Website relaunch', stage: 'planned', externalId: 'jira-1201' }, update: { id: '66a1f0c2e4b0a1b2c3d4e5f6', stage: 'done' } },
    resource: recordBatch(ctx),
  });

  registerTrashRoutes<{ object: string; id: string }>(app, ctx, {
    path: '/objects/:object/records/:id',
    params: RecordParams,
    scope: 'records:write',
    tags,
    noun: 'record',
    envelope: WrittenRecordEnvelope,
    remove: (trx, caller, p, permanent, opts) => deleteRecord(ctx, trx, caller, p.object, p.id, permanent, opts),
    restore: (trx, caller, p, opts) => restoreRecord(ctx, trx, caller, p.object, p.id, opts),
  });
}
