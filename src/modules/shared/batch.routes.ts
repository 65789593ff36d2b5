import type { TObject, TSchema } from '@sinclair/typebox';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifySchemaCompiler } from 'fastify';
import type { AppContext } from '../../context.js';
import { inTransaction } from '../../db/transaction.js';
import { callerOf } from '../../http/auth.js';
import { idempotentReply, IdempotencyHeaders } from '../idempotency/idempotent-route.js';
import { ok } from '../../http/schemas.js';
import { createValidatorCompiler } from '../../http/validation.js';
import type { EntityTagger } from '../../crypto/entity-tag.js';
import type { Scope } from '../orgs/principal.js';
import { Written } from './minimal-view.js';
import { BatchCreateBody, BatchEnvelope, BatchUpdateBody, looseItems, type UpsertKey } from './batch.schemas.js';
import { checkCreateItems, checkUpdateItems, inOrder, prepareCreates, runCreateBatch, runUpdateBatch, type BatchItemResult, type BatchResource } from './batch.service.js';

/** What a resource hands over to get `POST <path>/batch` and `PATCH <path>/batch`. */
export interface BatchRouteSpec<R, P> {
  /** The collection's path, e.g. `/leads`. */
  path: string;
  params?: TObject;
  scope: Scope;
  tags: string[];
  /** The resource's schema in a result (`Type.Ref(Lead)`). */
  resourceSchema: TSchema;
  examples: { create: unknown; update: unknown };
  resource: BatchResource<R, P>;
}

/**
 * A batch may carry 100 items of a resource's largest body: its body limit is ten times BODY_LIMIT_BYTES
 * (10 MiB by default), while every other route keeps the one limit.
 */
export const BATCH_BODY_LIMIT_FACTOR = 10;
export const batchBodyLimit = (bodyLimitBytes: number): number => bodyLimitBytes * BATCH_BODY_LIMIT_FACTOR;

/** Validates a batch's envelope only (`looseItems`), everything else as every route does. */
function envelopeOnly(body: TSchema): FastifySchemaCompiler<unknown> {
  const compile = createValidatorCompiler();
  const loose = looseItems(body);
  return (req) => compile(req.httpPart === 'body' ? { ...req, schema: loose } : req);
}

/**
 * The results as the API shows them. An item that carries its resource (201, 200, and the current one on 412)
 * carries its `etag` too, the ETag a GET of it answers, so that a retry with `ifMatch` needs no GET first.
 */
const present = <R>(tagger: EntityTagger, noun: string, results: BatchItemResult<R>[]) =>
  results.map(({ index, status, resource, error }) => ({
    index,
    status,
    ...(resource !== undefined ? { [noun]: resource, etag: tagger.tagOf(resource) } : {}),
    ...(error ? { error } : {}),
  }));

/**
 * Registers the batch routes of a resource (contract §8). Each is one request for the rate limit, one
 * transaction, and the POST honours Idempotency-Key over the whole batch; within it every item succeeds or
 * fails alone, with its events (batch.service.ts: in bulk statements where it can, else in its own savepoint).
 */
export function registerBatchRoutes<R, P>(parent: FastifyInstance, ctx: AppContext, spec: BatchRouteSpec<R, P>): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const { noun, label } = spec.resource;
  const written = Written(spec.resourceSchema);
  const bodyLimit = batchBodyLimit(ctx.config.bodyLimitBytes);
  const createBody = BatchCreateBody(spec.resource.createSchema, spec.resource.upsertBy, spec.examples.create);
  const updateBody = BatchUpdateBody(spec.resource.updateSchema, spec.examples.update);
  const resource = spec.resource as BatchResource<R, unknown>;
  const { dialect } = ctx.database;
  const { entityTagger } = ctx;

  app.post(`${spec.path}/batch`, {
    config: { auth: { anyOf: [spec.scope] }, idempotent: true },
    bodyLimit,
    validatorCompiler: envelopeOnly(createBody),
    schema: {
      tags: spec.tags,
      summary: `Create or upsert up to 100 ${noun}s`,
      description:
        `Each item is checked and applied on its own, atomically with its events: \`data.results\` has one entry per item, in order, with its status (201 created, 200 updated by upsert, 400, 409, 412) and the ${noun} or the error. ` +
        'A bad item never stops the others. One request for the rate limit; Idempotency-Key covers the whole batch.',
      headers: IdempotencyHeaders,
      ...(spec.params ? { params: spec.params } : {}),
      body: createBody,
      response: { 200: BatchEnvelope(noun, label, written, 'create') },
    },
    handler: async (request, reply) => {
      const caller = callerOf(request);
      const body = request.body as { items: unknown[]; upsertBy?: UpsertKey };
      const open = await resource.openFieldChecks?.(ctx.database.db, caller);
      const { valid, refused } = checkCreateItems(resource, body.items, body.upsertBy, open);
      await resource.checkPath?.(ctx.database.db, caller, request.params);
      const prepared = await prepareCreates(resource, ctx.database.db, caller, request.params, valid, body.upsertBy);
      return idempotentReply(ctx, request, reply, 200, async (trx) => {
        const applied = await runCreateBatch(resource, { trx, dialect, entityTagger, caller, params: request.params }, valid, body.upsertBy, prepared);
        return ok({ results: present(entityTagger, noun, inOrder(refused, applied)) });
      });
    },
  });

  app.patch(`${spec.path}/batch`, {
    config: { auth: { anyOf: [spec.scope] } },
    bodyLimit,
    validatorCompiler: envelopeOnly(updateBody),
    schema: {
      tags: spec.tags,
      summary: `Update up to 100 ${noun}s`,
      description:
        `Each item \`{id, ifMatch?, …fields}\` is applied on its own, atomically with its events, as \`PATCH ${spec.path}/{id}\` would: \`data.results\` has one entry per item, in order (200, 400, 404, 409, or 412 with the current ${noun} when \`ifMatch\` is not its ETag). ` +
        'A bad item never stops the others. One request for the rate limit.',
      ...(spec.params ? { params: spec.params } : {}),
      body: updateBody,
      response: { 200: BatchEnvelope(noun, label, written, 'update') },
    },
    handler: async (request) => {
      const caller = callerOf(request);
      const open = await resource.openFieldChecks?.(ctx.database.db, caller);
      const { valid, refused } = checkUpdateItems(resource, (request.body as { items: unknown[] }).items, open);
      await resource.checkPath?.(ctx.database.db, caller, request.params);
      const applied = await inTransaction(ctx, (trx) => runUpdateBatch(resource, { trx, dialect, entityTagger, caller, params: request.params }, valid));
      return ok({ results: present(entityTagger, noun, inOrder(refused, applied)) });
    },
  });
}
