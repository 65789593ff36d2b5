import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { customBodyCheck } from '../fields/custom-fields.service.js';
import { inTransaction } from '../../db/transaction.js';
import { callerOf, requirePrincipal } from '../../http/auth.js';
import { createdReplyInOneStatement, IdempotencyHeaders } from '../idempotency/idempotent-route.js';
import { IdParams, ok } from '../../http/schemas.js';
import { CreateLeadBody, Lead, LeadEnvelope, WrittenLeadEnvelope, LeadListEnvelope, ListLeadsQuery, UpdateLeadBody } from './leads.schemas.js';
import { deleteLead, getLead, listLeads, prepareLeadsOf, restoreLead, storedInOneStatement, storePreparedLeads, updateLead } from './leads.service.js';
import { registerTrashRoutes } from '../shared/trash.routes.js';
import { ifMatchOf } from '../../http/entity-tags.js';
import { registerBatchRoutes } from '../shared/batch.routes.js';
import { Type } from '@sinclair/typebox';
import { leadBatch, leadSealThread } from './leads.batch.js';

const tags = ['Leads'];

export function registerLeadRoutes(parent: FastifyInstance, ctx: AppContext): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/leads', {
    config: { auth: { anyOf: ['leads:read'] } },
    schema: {
      tags,
      summary: 'List leads',
      description: 'Newest first. `q` is an exact e-mail or phone lookup, or a case-insensitive substring of the name. `deleted=true` lists the trash. `sort` orders it; `status`, `source`, `sourceCampaign`, `ownerId`, `accountId` and the created/updated ranges filter it. Pages by `page` (with a total) or by cursor: pass `pagination.nextCursor` as `after` (no total; same cost at any depth).',
      querystring: ListLeadsQuery,
      response: { 200: LeadListEnvelope },
    },
    handler: async (request) => ok(await listLeads(ctx, requirePrincipal(request).organization.id, request.query)),
  });

  app.post('/leads', {
    config: { auth: { anyOf: ['leads:write'] }, idempotent: true, etag: 'lead' },
    preValidation: customBodyCheck(ctx, 'leads', 'create'),
    schema: {
      tags,
      summary: 'Create a lead',
      description: 'Stored, then the assignment rules run, then lead.created is recorded — atomically. Send Idempotency-Key to make retries safe.',
      headers: IdempotencyHeaders,
      body: CreateLeadBody,
      response: { 201: LeadEnvelope },
    },
    handler: async (request, reply) => {
      const caller = callerOf(request);
      // The fields the preValidation hook checked the body against.
      const prepared = await prepareLeadsOf(ctx, ctx.database.db, caller.organizationId, [request.body], request.customFields ?? undefined);
      return createdReplyInOneStatement(ctx, request, reply, storedInOneStatement(prepared), async (db) => ok({ lead: (await storePreparedLeads(db, caller, prepared))[0]! }));
    },
  });

  app.get('/leads/:id', {
    config: { auth: { anyOf: ['leads:read'] }, etag: 'lead' },
    schema: { tags, summary: 'Get a lead', params: IdParams, response: { 200: LeadEnvelope } },
    handler: async (request) => ok({ lead: await getLead(ctx, requirePrincipal(request).organization.id, request.params.id) }),
  });

  app.patch('/leads/:id', {
    config: { auth: { anyOf: ['leads:write'] }, etag: 'lead', ifMatch: true },
    preValidation: customBodyCheck(ctx, 'leads', 'update'),
    schema: { tags, summary: 'Update a lead', params: IdParams, body: UpdateLeadBody, response: { 200: WrittenLeadEnvelope } },
    handler: async (request) => {
      const caller = callerOf(request);
      const opts = { ifMatch: ifMatchOf(request) };
      const lead = await inTransaction(ctx, (trx) => updateLead(ctx, trx, caller, request.params.id, request.body, opts));
      return ok({ lead });
    },
  });

  const seals = leadSealThread(ctx);
  app.addHook('onClose', () => seals.close());
  registerBatchRoutes(app, ctx, {
    path: '/leads',
    scope: 'leads:write',
    tags,
    resourceSchema: Type.Ref(Lead),
    examples: {
      create: { name: 'Ada Lovelace', email: 'ada@example.com', externalId: 'crm-42', source: 'WEBSITE' },
      update: { id: '66a1f0c2e4b0a1b2c3d4e5f6', ifMatch: '"3q2-7w"', status: 'CONTACTED' },
    },
    resource: leadBatch(ctx, seals),
  });

  registerTrashRoutes<{ id: string }>(app, ctx, {
    path: '/leads/:id',
    params: IdParams,
    scope: 'leads:write',
    tags,
    noun: 'lead',
    envelope: WrittenLeadEnvelope,
    remove: (trx, caller, { id }, permanent, opts) => deleteLead(ctx, trx, caller, id, permanent, opts),
    restore: (trx, caller, { id }, opts) => restoreLead(ctx, trx, caller, id, opts),
  });
}

