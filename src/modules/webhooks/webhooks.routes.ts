import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { inTransaction } from '../../db/transaction.js';
import { callerOf, requirePrincipal } from '../../http/auth.js';
import { createdReply, IdempotencyHeaders } from '../idempotency/idempotent-route.js';
import { IdParams, ok } from '../../http/schemas.js';
import { ifMatchOf } from '../../http/entity-tags.js';
import { runIdempotent } from '../idempotency/idempotency.service.js';
import {
  CreateWebhookBody,
  DeletedWebhookEnvelope,
  DeliveryEnvelope,
  DeliveryListEnvelope,
  DeliveryParams,
  ListDeliveriesQuery,
  ListWebhooksQuery,
  UpdateWebhookBody,
  WebhookEnvelope,
  WebhookListEnvelope,
  WrittenDeliveryEnvelope,
  WrittenWebhookEnvelope,
} from './webhooks.schemas.js';
import {
  checkWebhookInput,
  createWebhook,
  deleteWebhook,
  getWebhook,
  listWebhookDeliveries,
  listWebhooks,
  retryWebhookDelivery,
  rotateWebhookSecret,
  sendTestEvent,
  updateWebhook,
  type UrlCheckDeps,
} from './webhooks.service.js';

const tags = ['Webhooks'];
const read = { auth: { anyOf: ['webhooks:read' as const] } };
const write = { auth: { anyOf: ['webhooks:write' as const] } };
/** Create and rotate-secret answer the endpoint with its secret, which their tag leaves out: it is the one GET answers. */
const tagWithoutSecret = { etag: 'webhook', etagOmits: ['secret'] };

export function registerWebhookRoutes(parent: FastifyInstance, ctx: AppContext, deps: UrlCheckDeps = {}): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  const orgOf = (request: Parameters<typeof requirePrincipal>[0]) => requirePrincipal(request).organization.id;

  app.get('/webhooks', {
    config: read,
    schema: { tags, summary: 'List webhook endpoints', description: 'Newest first by default; sort by createdAt or updatedAt, - for descending. Paged by page/limit or by cursor (pass pagination.nextCursor as after, with the same sort), filtered by `enabled` (true|false), `eventType` (the endpoints that receive it: subscribed by name or to every event with *) and the created/updated ranges. Needs webhooks:read.', querystring: ListWebhooksQuery, response: { 200: WebhookListEnvelope } },
    handler: async (request) => ok(await listWebhooks(ctx, orgOf(request), request.query)),
  });

  app.post('/webhooks', {
    config: { ...write, idempotent: true, ...tagWithoutSecret },
    schema: {
      tags,
      summary: 'Register a webhook endpoint',
      description: 'The answer carries the signing secret (whsec_…): store it, it is not shown again. The URL must be https and resolve to public addresses. The key needs the read scope of every event type subscribed to (`*`: all of them; webhook.test: none), else 403 INSUFFICIENT_SCOPE. 409 LIMIT_EXCEEDED when the organization already has MAX_WEBHOOKS_PER_ORG endpoints (default 50).',
      headers: IdempotencyHeaders,
      body: CreateWebhookBody,
      response: { 201: WebhookEnvelope },
    },
    handler: async (request, reply) => {
      await checkWebhookInput(ctx, request.body, deps);
      const organizationId = orgOf(request);
      const scopes = requirePrincipal(request).key.scopes;
      return createdReply(ctx, request, reply, async (trx) => ok({ webhook: await createWebhook(ctx, trx, organizationId, request.body, { scopes }) }));
    },
  });

  app.get('/webhooks/:id', {
    config: { ...read, etag: 'webhook' },
    schema: { tags, summary: 'Get a webhook endpoint', params: IdParams, response: { 200: WebhookEnvelope } },
    handler: async (request) => ok({ webhook: await getWebhook(ctx, orgOf(request), request.params.id) }),
  });

  app.patch('/webhooks/:id', {
    config: { ...write, etag: 'webhook', ifMatch: true },
    schema: {
      tags,
      summary: 'Update a webhook endpoint',
      description: '`enabled: false` stops deliveries and cancels queued retries; `enabled: true` re-enables an endpoint disabled by a 410 or 3 days of failures. Changing `url` or `events` needs the read scope of every event type the endpoint then receives (else 403 INSUFFICIENT_SCOPE). A key without webhooks:read gets the endpoint as MinimalWebhook (id, updatedAt), not its URL or events.',
      params: IdParams,
      body: UpdateWebhookBody,
      response: { 200: WrittenWebhookEnvelope },
    },
    handler: async (request) => {
      await checkWebhookInput(ctx, request.body, deps);
      const organizationId = orgOf(request);
      const opts = { ifMatch: ifMatchOf(request), scopes: requirePrincipal(request).key.scopes };
      return ok({ webhook: await inTransaction(ctx, (trx) => updateWebhook(ctx, trx, organizationId, request.params.id, request.body, opts)) });
    },
  });

  app.delete('/webhooks/:id', {
    config: { ...write, ifMatch: true },
    schema: { tags, summary: 'Delete a webhook endpoint and its delivery log', description: 'With If-Match, only the version it names (else 412 with the current endpoint).', params: IdParams, response: { 200: DeletedWebhookEnvelope } },
    handler: async (request) => {
      await deleteWebhook(ctx, orgOf(request), request.params.id, { ifMatch: ifMatchOf(request) });
      return ok({ webhook: { id: request.params.id, deleted: true as const } });
    },
  });

  app.post('/webhooks/:id/rotate-secret', {
    config: { ...write, idempotent: true, ...tagWithoutSecret },
    schema: {
      tags,
      summary: 'Rotate the signing secret',
      description: 'Returns the new secret once. For 24 hours deliveries carry a signature with each secret. Send Idempotency-Key so a retried call does not rotate twice. A key without webhooks:read gets the endpoint as MinimalWebhook: its id, updatedAt and the new secret.',
      headers: IdempotencyHeaders,
      params: IdParams,
      response: { 200: WrittenWebhookEnvelope },
    },
    handler: async (request, reply) => {
      const header = request.headers['idempotency-key'];
      const result = await runIdempotent(
        ctx,
        { organizationId: orgOf(request), header: Array.isArray(header) ? header.join(',') : header, method: request.method, path: request.url.split('?')[0]!, body: null },
        async (trx) => ({ status: 200, body: ok({ webhook: await rotateWebhookSecret(ctx, trx, orgOf(request), request.params.id) }) }),
      );
      if (result.replayed) reply.header('idempotent-replayed', 'true');
      return result.body;
    },
  });

  app.post('/webhooks/:id/test', {
    config: { ...write, idempotent: true },
    schema: {
      tags,
      summary: 'Send a test event',
      description: 'Records a `webhook.test` event and queues its delivery to this endpoint only; follow it in the delivery log.',
      headers: IdempotencyHeaders,
      params: IdParams,
      response: { 201: DeliveryEnvelope },
    },
    handler: async (request, reply) => {
      const caller = callerOf(request);
      return createdReply(ctx, request, reply, async (trx) => ok({ delivery: await sendTestEvent(ctx, trx, caller, request.params.id) }));
    },
  });

  app.get('/webhooks/:id/deliveries', {
    config: read,
    schema: {
      tags,
      summary: 'Delivery log of an endpoint',
      description:
        'Every attempt with its status, duration and the first kilobyte of the answer. Kept 30 days. In creation order: newest first by default, `sort=createdAt` oldest first (no updatedAt order: a delivery changes at every attempt, and an index in that order would cost every attempt another write; filter on updatedAfter/updatedBefore instead). Filtered by status, eventId, createdAfter/createdBefore (when the event was queued for this endpoint) and updatedAfter/updatedBefore (the latest change: an attempt starting or ending, a re-send, a cancellation). Paged by page/limit or by cursor (pass pagination.nextCursor as after, with the same sort).',
      params: IdParams,
      querystring: ListDeliveriesQuery,
      response: { 200: DeliveryListEnvelope },
    },
    handler: async (request) => ok(await listWebhookDeliveries(ctx, orgOf(request), request.params.id, request.query)),
  });

  app.post('/webhooks/:id/deliveries/:deliveryId/retry', {
    config: write,
    schema: {
      tags,
      summary: 'Re-send a delivery',
      description: 'Queues one more attempt of the same event (same event id and delivery id, fresh signature), sent within a second. A key without webhooks:read gets the delivery as MinimalDelivery, without the attempts and the receiver\'s answers.',
      params: DeliveryParams,
      response: { 200: WrittenDeliveryEnvelope },
    },
    handler: async (request) => {
      const organizationId = orgOf(request);
      const { id, deliveryId } = request.params;
      return ok({ delivery: await inTransaction(ctx, (trx) => retryWebhookDelivery(ctx, trx, organizationId, id, deliveryId)) });
    },
  });
}
