import type { Core } from '../core.js';
import { etagOf } from '../etag.js';
import type { CallOptions, CreateOptions, Query, RequestBody, ResponseData, Schema, Written } from '../types.js';
import { listing } from './listing.js';

const WEBHOOKS = '/api/public/v1/webhooks';
const WEBHOOK = '/api/public/v1/webhooks/{id}';
const DELIVERIES = '/api/public/v1/webhooks/{id}/deliveries';

export type Webhook = Schema<'Webhook'>;
export type WebhookDelivery = Schema<'WebhookDelivery'>;
/** What update and rotateSecret answer a key without webhooks:read: id, updatedAt and a rotation's new secret. */
export type MinimalWebhook = Schema<'MinimalWebhook'>;
/** What a delivery's retry answers a key without webhooks:read: what the retry set, not the receiver's answers. */
export type MinimalDelivery = Schema<'MinimalDelivery'>;
export type WebhookCreate = RequestBody<typeof WEBHOOKS, 'post'>;
export type WebhookUpdate = RequestBody<typeof WEBHOOK, 'patch'>;
export type WebhookQuery = Query<typeof WEBHOOKS, 'get'>;
export type WebhookPage = ResponseData<typeof WEBHOOKS, 'get'>;
export type DeliveryQuery = Query<typeof DELIVERIES, 'get'>;
export type DeliveryPage = ResponseData<typeof DELIVERIES, 'get'>;

/** Webhook endpoints (scopes webhooks:read / webhooks:write). `secret` is only in the answers of create and rotateSecret. */
export function webhooksResource(core: Core) {
  return {
    create: async (body: WebhookCreate, opts?: CreateOptions): Promise<Webhook> => (await core.create(WEBHOOKS, body, opts)).webhook,
    get: async (id: string, opts?: CallOptions): Promise<Webhook> => (await core.call(WEBHOOK, 'get', { params: { id } }, opts)).webhook,
    /** The current version, or undefined when `known` (as returned earlier) is still current (304, no body sent). */
    getIfChanged: async (known: Webhook, opts?: CallOptions): Promise<Webhook | undefined> =>
      (await core.call(WEBHOOK, 'get', { params: { id: known.id }, ifNoneMatch: etagOf(known) }, opts))?.webhook,
    update: async (id: string, patch: WebhookUpdate, opts?: CallOptions): Promise<Written<Webhook, MinimalWebhook>> => (await core.call(WEBHOOK, 'patch', { params: { id }, body: patch }, opts)).webhook,
    delete: async (id: string, opts?: CallOptions) => (await core.call(WEBHOOK, 'delete', { params: { id } }, opts)).webhook,
    /** A new secret, returned once; for 24 h deliveries are signed with both. Retries replay, never rotate twice. */
    rotateSecret: async (id: string, opts?: CreateOptions): Promise<Written<Webhook, MinimalWebhook>> =>
      (await core.keyedPost('/api/public/v1/webhooks/{id}/rotate-secret', { params: { id } }, opts)).webhook,
    /** Queues a `webhook.test` event to this endpoint; follow it with `deliveries(id)`. */
    test: async (id: string, opts?: CreateOptions): Promise<WebhookDelivery> => (await core.keyedPost('/api/public/v1/webhooks/{id}/test', { params: { id } }, opts)).delivery,
    /** The delivery log of one endpoint (newest first, kept 30 days), and re-sending one delivery. */
    deliveries: (id: string) => ({
      ...listing((query: DeliveryQuery, opts?: CallOptions) => core.call(DELIVERIES, 'get', { params: { id }, query }, opts), (page) => page.deliveries),
      retry: async (deliveryId: string, opts?: CallOptions): Promise<Written<WebhookDelivery, MinimalDelivery>> =>
        (await core.call('/api/public/v1/webhooks/{id}/deliveries/{deliveryId}/retry', 'post', { params: { id, deliveryId } }, opts)).delivery,
    }),
    ...listing((query: WebhookQuery, opts?: CallOptions) => core.call(WEBHOOKS, 'get', { query }, opts), (page) => page.webhooks),
  };
}
