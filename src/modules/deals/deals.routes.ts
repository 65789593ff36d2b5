import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { customBodyCheck } from '../fields/custom-fields.service.js';
import { inTransaction } from '../../db/transaction.js';
import { callerOf, requirePrincipal } from '../../http/auth.js';
import { createdReply, IdempotencyHeaders } from '../idempotency/idempotent-route.js';
import { IdParams, ok } from '../../http/schemas.js';
import { CreateDealBody, DealEnvelope, WrittenDealEnvelope, DealListEnvelope, ListDealsQuery, UpdateDealBody } from './deals.schemas.js';
import { createDeal, deleteDeal, getDeal, listDeals, restoreDeal, updateDeal } from './deals.service.js';
import { registerTrashRoutes } from '../shared/trash.routes.js';
import { ifMatchOf } from '../../http/entity-tags.js';
import { DealStagesEnvelope, PutDealStagesBody } from './stages.schemas.js';
import { putDealStages } from './stage-moves.service.js';
import { Type } from '@sinclair/typebox';
import { registerBatchRoutes } from '../shared/batch.routes.js';
import { dealBatch } from './deals.batch.js';
import { Deal } from './deals.schemas.js';
import { getDealStages } from './stages.service.js';

const tags = ['Deals'];

export function registerDealRoutes(parent: FastifyInstance, ctx: AppContext): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/deal-stages', {
    config: { auth: { anyOf: ['deals:read'] }, etag: 'stages' },
    schema: {
      tags,
      summary: 'List the deal stages',
      description: "The organization's stages in pipeline order, each `{key, label, kind}` with kind open, won or lost. Set with PUT /deal-stages, in the console or with `crm stages set`; until then the default qualification, proposal, negotiation, won, lost.",
      response: { 200: DealStagesEnvelope },
    },
    handler: async (request) => ok({ stages: await getDealStages(ctx.database.db, requirePrincipal(request).organization.id) }),
  });

  app.put('/deal-stages', {
    config: { auth: { anyOf: ['objects:admin'] }, etag: 'stages', ifMatch: true },
    schema: {
      tags,
      summary: 'Replace the deal stages',
      description:
        'The whole list, in pipeline order (the first is a new deal\'s default): unique keys, at least one `open` stage, at most 50. ' +
        'A stage the list drops may still hold deals (live or trashed) only if `moveTo` names the kept stage they move to: they all move in the same transaction, each recording deal.stage_changed. ' +
        'Without that entry the answer is 400 VALIDATION_FAILED naming the stage (`moveTo.<key>`, code `in_use`), and nothing changes. ' +
        'Send If-Match with the ETag of the list you edited (GET /deal-stages) so that a change made meanwhile is not overwritten: 412 with the current list instead.',
      body: PutDealStagesBody,
      response: { 200: DealStagesEnvelope },
    },
    handler: async (request) => {
      const caller = callerOf(request);
      const opts = { ifMatch: ifMatchOf(request) };
      return ok({ stages: await inTransaction(ctx, (trx) => putDealStages(ctx, trx, caller, request.body, opts)) });
    },
  });

  app.get('/deals', {
    config: { auth: { anyOf: ['deals:read'] } },
    schema: {
      tags,
      summary: 'List deals',
      description: 'Newest first unless `sort` says otherwise, filtered by `stage`, `accountId`, `leadId`, `ownerId`, `q` (case-insensitive substring of the name) and the created/updated ranges; the filters combine. Pages by `page` (with a total) or by cursor: pass `pagination.nextCursor` as `after` (no total; same cost at any depth).',
      querystring: ListDealsQuery,
      response: { 200: DealListEnvelope },
    },
    handler: async (request) => ok(await listDeals(ctx, requirePrincipal(request).organization.id, request.query)),
  });

  app.post('/deals', {
    config: { auth: { anyOf: ['deals:write'] }, idempotent: true, etag: 'deal' },
    preValidation: customBodyCheck(ctx, 'deals', 'create'),
    schema: {
      tags,
      summary: 'Create a deal',
      description: "Stage defaults to the organization's first stage. `accountId`, `leadId` and `ownerId` must be records of your organization (every bad one is listed). Records deal.created. Send Idempotency-Key to make retries safe.",
      headers: IdempotencyHeaders,
      body: CreateDealBody,
      response: { 201: DealEnvelope },
    },
    handler: async (request, reply) => {
      const caller = callerOf(request);
      return createdReply(ctx, request, reply, async (trx) => ok({ deal: await createDeal(ctx, trx, caller, request.body) }));
    },
  });

  app.get('/deals/:id', {
    config: { auth: { anyOf: ['deals:read'] }, etag: 'deal' },
    schema: { tags, summary: 'Get a deal', description: 'The full current record.', params: IdParams, response: { 200: DealEnvelope } },
    handler: async (request) => ok({ deal: await getDeal(ctx, requirePrincipal(request).organization.id, request.params.id) }),
  });

  app.patch('/deals/:id', {
    config: { auth: { anyOf: ['deals:write'] }, etag: 'deal', ifMatch: true },
    preValidation: customBodyCheck(ctx, 'deals', 'update'),
    schema: {
      tags,
      summary: 'Update a deal',
      description: 'Only the fields sent change; null clears an optional field. Any move between defined stages is allowed and records deal.stage_changed; other changed fields record deal.updated.',
      params: IdParams,
      body: UpdateDealBody,
      response: { 200: WrittenDealEnvelope },
    },
    handler: async (request) => {
      const caller = callerOf(request);
      const opts = { ifMatch: ifMatchOf(request) };
      const deal = await inTransaction(ctx, (trx) => updateDeal(ctx, trx, caller, request.params.id, request.body, opts));
      return ok({ deal });
    },
  });

  registerBatchRoutes(app, ctx, {
    path: '/deals',
    scope: 'deals:write',
    tags,
    resourceSchema: Type.Ref(Deal),
    examples: { create: { name: 'Analytical Engines — 40 seats', amount: '48000.00', currency: 'EUR', externalId: 'opp-77' }, update: { id: '66a1f0c2e4b0a1b2c3d4e5f6', stage: 'proposal' } },
    resource: dealBatch(ctx),
  });

  registerTrashRoutes<{ id: string }>(app, ctx, {
    path: '/deals/:id',
    params: IdParams,
    scope: 'deals:write',
    tags,
    noun: 'deal',
    envelope: WrittenDealEnvelope,
    remove: (trx, caller, { id }, permanent, opts) => deleteDeal(ctx, trx, caller, id, permanent, opts),
    restore: (trx, caller, { id }, opts) => restoreDeal(ctx, trx, caller, id, opts),
  });
}
