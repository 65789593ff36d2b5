import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { customBodyCheck } from '../fields/custom-fields.service.js';
import { inTransaction } from '../../db/transaction.js';
import { callerOf, requirePrincipal } from '../../http/auth.js';
import { createdReply, IdempotencyHeaders } from '../idempotency/idempotent-route.js';
import { IdParams, ok } from '../../http/schemas.js';
import { AccountEnvelope, WrittenAccountEnvelope, AccountListEnvelope, CreateAccountBody, ListAccountsQuery, UpdateAccountBody } from './accounts.schemas.js';
import { createAccount, deleteAccount, getAccount, listAccounts, restoreAccount, updateAccount } from './accounts.service.js';
import { registerTrashRoutes } from '../shared/trash.routes.js';
import { ifMatchOf } from '../../http/entity-tags.js';
import { Type } from '@sinclair/typebox';
import { registerBatchRoutes } from '../shared/batch.routes.js';
import { accountBatch } from './accounts.batch.js';
import { Account } from './accounts.schemas.js';

const tags = ['Accounts'];

export function registerAccountRoutes(parent: FastifyInstance, ctx: AppContext): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/accounts', {
    config: { auth: { anyOf: ['accounts:read'] } },
    schema: {
      tags,
      summary: 'List accounts',
      description: 'Newest first. `q` is an exact e-mail or phone lookup (blind index), or a case-insensitive substring of the name. `sort` orders it, `ownerId` and the created/updated ranges filter it. Pages by `page` (with a total) or by cursor: pass `pagination.nextCursor` as `after` (no total; same cost at any depth).',
      querystring: ListAccountsQuery,
      response: { 200: AccountListEnvelope },
    },
    handler: async (request) => ok(await listAccounts(ctx, requirePrincipal(request).organization.id, request.query)),
  });

  app.post('/accounts', {
    config: { auth: { anyOf: ['accounts:write'] }, idempotent: true, etag: 'account' },
    preValidation: customBodyCheck(ctx, 'accounts', 'create'),
    schema: {
      tags,
      summary: 'Create an account',
      description: 'Stores the account and records account.created atomically. Send Idempotency-Key to make retries safe.',
      headers: IdempotencyHeaders,
      body: CreateAccountBody,
      response: { 201: AccountEnvelope },
    },
    handler: async (request, reply) => {
      const caller = callerOf(request);
      return createdReply(ctx, request, reply, async (trx) => ok({ account: await createAccount(ctx, trx, caller, request.body) }));
    },
  });

  app.get('/accounts/:id', {
    config: { auth: { anyOf: ['accounts:read'] }, etag: 'account' },
    schema: { tags, summary: 'Get an account', params: IdParams, response: { 200: AccountEnvelope } },
    handler: async (request) => ok({ account: await getAccount(ctx, requirePrincipal(request).organization.id, request.params.id) }),
  });

  app.patch('/accounts/:id', {
    config: { auth: { anyOf: ['accounts:write'] }, etag: 'account', ifMatch: true },
    preValidation: customBodyCheck(ctx, 'accounts', 'update'),
    schema: {
      tags,
      summary: 'Update an account',
      description: 'Only the fields sent change; null clears an optional field. Records account.updated with the changed fields.',
      params: IdParams,
      body: UpdateAccountBody,
      response: { 200: WrittenAccountEnvelope },
    },
    handler: async (request) => {
      const caller = callerOf(request);
      const opts = { ifMatch: ifMatchOf(request) };
      const account = await inTransaction(ctx, (trx) => updateAccount(ctx, trx, caller, request.params.id, request.body, opts));
      return ok({ account });
    },
  });

  registerBatchRoutes(app, ctx, {
    path: '/accounts',
    scope: 'accounts:write',
    tags,
    resourceSchema: Type.Ref(Account),
    examples: { create: { name: 'Analytical Engines Ltd', domain: 'analytical.example', externalId: 'erp-1001' }, update: { id: '66a1f0c2e4b0a1b2c3d4e5f6', industry: 'Computing' } },
    resource: accountBatch(ctx),
  });

  registerTrashRoutes<{ id: string }>(app, ctx, {
    path: '/accounts/:id',
    params: IdParams,
    scope: 'accounts:write',
    tags,
    noun: 'account',
    envelope: WrittenAccountEnvelope,
    remove: (trx, caller, { id }, permanent, opts) => deleteAccount(ctx, trx, caller, id, permanent, opts),
    restore: (trx, caller, { id }, opts) => restoreAccount(ctx, trx, caller, id, opts),
  });
}
