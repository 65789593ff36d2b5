import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { inTransaction } from '../../db/transaction.js';
import { requirePrincipal } from '../../http/auth.js';
import { createdReply, IdempotencyHeaders } from '../idempotency/idempotent-route.js';
import { ok } from '../../http/schemas.js';
import { errorResponse } from '../../http/openapi-responses.js';
import { ifMatchOf } from '../../http/entity-tags.js';
import { CreateObjectBody, ListObjectsQuery, ObjectEnvelope, ObjectListEnvelope, SlugParams, UpdateObjectBody } from './objects.schemas.js';
import { createObject, getObject, listObjects, updateObject } from './objects.service.js';

const tags = ['Custom objects'];

export function registerObjectRoutes(parent: FastifyInstance, ctx: AppContext): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const orgOf = (request: Parameters<typeof requirePrincipal>[0]) => requirePrincipal(request).organization.id;

  app.get('/objects', {
    config: { auth: { anyOf: ['records:read', 'objects:admin'] } },
    schema: { tags, summary: 'List custom objects', description: 'Custom objects in the order of sort (default -createdAt, newest first), then the built-in leads, accounts and deals in that order under every sort (builtIn: true, standard fields read-only; they exist with the organization, so they keep their place after what it defines): one list, counted in total and paged by page/limit or by cursor (pass pagination.nextCursor as after, with the same sort) like any other, and filtered by the created/updated ranges. Needs records:read or objects:admin.', querystring: ListObjectsQuery, response: { 200: ObjectListEnvelope } },
    handler: async (request) => ok(await listObjects(ctx, orgOf(request), request.query)),
  });

  app.post('/objects', {
    config: { auth: { anyOf: ['objects:admin'] }, idempotent: true, etag: 'object' },
    schema: {
      tags,
      summary: 'Define a custom object',
      description:
        'Fields of type text, long_text, number, boolean, date (date-only), datetime, select (with options), email, phone, url; optional ordered stages. ' +
        'At most 100 fields and 50 stages (400 VALIDATION_FAILED beyond). 409 CONFLICT when the slug is taken; 409 LIMIT_EXCEEDED when the organization already has MAX_OBJECTS_PER_ORG objects (default 100).',
      headers: IdempotencyHeaders,
      body: CreateObjectBody,
      response: { 201: ObjectEnvelope, 409: errorResponse('ObjectConflict') },
    },
    handler: async (request, reply) => {
      const organizationId = orgOf(request);
      return createdReply(ctx, request, reply, async (trx) => ok({ object: await createObject(ctx, trx, organizationId, request.body) }));
    },
  });

  app.get('/objects/:slug', {
    config: { auth: { anyOf: ['records:read', 'objects:admin'] }, etag: 'object' },
    schema: { tags, summary: 'Get a custom object', params: SlugParams, response: { 200: ObjectEnvelope } },
    handler: async (request) => ok({ object: await getObject(ctx, orgOf(request), request.params.slug) }),
  });

  app.patch('/objects/:slug', {
    config: { auth: { anyOf: ['objects:admin'] }, etag: 'object', ifMatch: true },
    schema: { tags, summary: 'Change a custom object', description: `${UpdateObjectBody.description} leads, accounts and deals take custom fields this way: their standard fields may be sent back as GET shows them (readOnly: true) and are ignored, or left out; a changed standard field, a custom field keyed like a standard one, a stage or a new name is 400.`, params: SlugParams, body: UpdateObjectBody, response: { 200: ObjectEnvelope } },
    handler: async (request) => {
      const organizationId = orgOf(request);
      const opts = { ifMatch: ifMatchOf(request) };
      const object = await inTransaction(ctx, (trx) => updateObject(ctx, trx, organizationId, request.params.slug, request.body, opts));
      // Every instance's definition cache must have dropped a changed built-in definition before the reply.
      await ctx.database.changesSeen?.();
      return ok({ object });
    },
  });
}
