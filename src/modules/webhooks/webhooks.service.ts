import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/database.js';
import { AppError, notFound, validationFailed, type FieldError } from '../../errors.js';
import { checkCondition, lockForCondition, type WriteOptions } from '../shared/precondition.js';
import { newId } from '../../lib/ids.js';
import { listRequest } from '../../lib/list-request.js';
import { listCursors } from '../../crypto/list-cursors.js';
import { buildEvent } from '../events/events.js';
import { recordEvent } from '../events/outbox.store.js';
import { readScopesOf } from '../events/feed.service.js';
import type { Actor, Scope } from '../orgs/principal.js';
import {
  cancelPendingDeliveries,
  findDelivery,
  findDeliveryWithAttempts,
  insertDelivery,
  listDeliveries,
  pruneDeliveries,
  requeueDelivery,
  type StoredAttempt,
  type StoredDelivery,
} from './deliveries.store.js';
import { generateWebhookSecret } from './signature.js';
import { checkWebhookUrl } from './ssrf.js';
import { openSecret, ROTATION_WINDOW_MS, sealSecret } from './webhook-secrets.js';
import {
  ALL_EVENTS,
  type CreateWebhookBody,
  type ListDeliveriesQuery,
  type ListWebhooksQuery,
  type UpdateWebhookBody,
  type Webhook,
  type WebhookDelivery,
} from './webhooks.schemas.js';
import { countEndpoints, deleteEndpoint, findEndpoint, findEndpointById, insertEndpoint, listEndpoints, updateEndpoint, type StoredEndpoint } from './webhooks.store.js';

type Ctx = Pick<AppContext, 'database' | 'cipher' | 'clock' | 'config' | 'entityTagger'>;

export interface Caller {
  organizationId: string;
  actor: Actor;
}

export interface UrlCheckDeps {
  /** Host name → addresses; the system resolver by default (tests inject one). */
  resolveHost?: (host: string) => Promise<string[]>;
}

/** The delivery log is kept this long (contract §5), then pruned by the dispatcher. */
export const DELIVERY_LOG_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

export function toWebhook(e: StoredEndpoint, secret?: string): Webhook {
  return {
    id: e.id,
    url: e.url,
    events: e.events,
    description: e.description,
    enabled: e.enabled,
    disabledReason: e.disabledReason,
    failingSince: e.failingSince,
    previousSecretExpiresAt: e.previousSecretExpiresAt,
    ...(secret !== undefined ? { secret } : {}),
    createdAt: e.createdAt,
    updatedAt: e.updatedAt,
  };
}

/**
 * The checks that need the network (DNS) or span fields: run before any transaction opens, so a slow
 * resolver never holds the database. Every bad field is reported at once.
 */
export async function checkWebhookInput(ctx: Ctx, input: { url?: string; events?: string[] }, deps: UrlCheckDeps = {}): Promise<void> {
  const errors: FieldError[] = [];
  if (input.url !== undefined) {
    const result = await checkWebhookUrl(input.url, {
      allowPrivateNetworks: ctx.config.webhooks.allowPrivateNetworks,
      ...(deps.resolveHost ? { resolve: deps.resolveHost } : {}),
    });
    if (!result.ok) errors.push({ field: 'url', code: 'not_allowed', message: result.reason });
  }
  if (input.events !== undefined && input.events.length > 1 && input.events.includes(ALL_EVENTS)) {
    errors.push({ field: 'events', code: 'invalid_value', message: 'use ["*"] alone to receive every event type' });
  }
  if (errors.length) throw validationFailed(errors);
}

async function requireEndpoint(db: Executor, organizationId: string, id: string): Promise<StoredEndpoint> {
  const endpoint = await findEndpoint(db, organizationId, id);
  if (!endpoint) throw notFound('Webhook');
  return endpoint;
}

/** Stores a new endpoint with a fresh secret, encrypted; the answer is the only time the secret is shown. */
/**
 * An API key that sets where an endpoint's events go, or which events those are, must be able to read them
 * (`scopes`: the key's; the console and the CLI, run by people of the organization, pass none): otherwise a key
 * with webhooks:write alone could subscribe its own URL to every change, or point an existing endpoint at it.
 */
export interface EndpointWriteOptions extends WriteOptions {
  scopes?: readonly Scope[];
}

function checkReceiverScopes(scopes: readonly Scope[] | undefined, events: readonly string[]): void {
  if (scopes === undefined) return;
  const missing = [...readScopesOf(events)].filter(([scope]) => !scopes.includes(scope));
  if (missing.length === 0) return;
  const types = missing.flatMap(([, t]) => t);
  const shown = events.includes('*') ? 'every event (*)' : types.join(', ');
  throw new AppError('INSUFFICIENT_SCOPE', `Sending ${shown} to an endpoint needs the scope ${missing.map(([s]) => s).join(', ')}: a key may direct to a URL only the events it can read`);
}

export async function createWebhook(ctx: Ctx, trx: Executor, organizationId: string, input: CreateWebhookBody, opts: EndpointWriteOptions = {}): Promise<Webhook> {
  checkReceiverScopes(opts.scopes, input.events);
  const limit = ctx.config.maxWebhooksPerOrganization;
  if ((await countEndpoints(trx, ctx.database.dialect, organizationId)) >= limit) {
    throw new AppError('LIMIT_EXCEEDED', `The organization already has ${limit} webhook endpoints, the most allowed (MAX_WEBHOOKS_PER_ORG)`);
  }
  const now = ctx.clock.now().toISOString();
  const id = newId(ctx.clock.now());
  const secret = generateWebhookSecret();
  const enabled = input.enabled ?? true;
  const endpoint: StoredEndpoint = {
    id,
    organizationId,
    url: input.url.trim(),
    description: input.description ?? null,
    events: input.events,
    enabled,
    disabledReason: enabled ? null : 'DISABLED_BY_USER',
    failingSince: null,
    secretEnc: sealSecret(ctx.cipher, id, 'secret', secret),
    previousSecretEnc: null,
    previousSecretExpiresAt: null,
    createdAt: now,
    updatedAt: now,
  };
  await insertEndpoint(trx, endpoint);
  return toWebhook(endpoint, secret);
}

export async function getWebhook(ctx: Ctx, organizationId: string, id: string): Promise<Webhook> {
  return toWebhook(await requireEndpoint(ctx.database.db, organizationId, id));
}

export async function listWebhooks(ctx: Ctx & Pick<AppContext, 'cursorSeal'>, organizationId: string, query: ListWebhooksQuery) {
  const { rows, pagination } = await listEndpoints(ctx.database.db, ctx.database.dialect, organizationId, { enabled: query.enabled, eventType: query.eventType }, listRequest(query, listCursors(ctx, organizationId)));
  return { webhooks: rows.map((e) => toWebhook(e)), pagination };
}

/**
 * Applies the sent fields. Disabling cancels the queued retries; enabling clears the failure flag, so an
 * endpoint disabled after 3 days of failures (or a 410) gets a clean start.
 */
export async function updateWebhook(ctx: Ctx, trx: Executor, organizationId: string, id: string, patch: UpdateWebhookBody, opts: EndpointWriteOptions = {}): Promise<Webhook> {
  await lockForCondition(ctx, trx, 'webhook_endpoints', organizationId, id, opts);
  const current = await requireEndpoint(trx, organizationId, id);
  checkCondition(ctx, opts, 'webhook', toWebhook(current));
  const now = ctx.clock.now().toISOString();
  const next: StoredEndpoint = {
    ...current,
    url: patch.url?.trim() ?? current.url,
    events: patch.events ?? current.events,
    description: patch.description !== undefined ? patch.description : current.description,
    updatedAt: now,
  };
  if (patch.url !== undefined || patch.events !== undefined) checkReceiverScopes(opts.scopes, next.events);
  if (patch.enabled === true && !current.enabled) Object.assign(next, { enabled: true, disabledReason: null, failingSince: null });
  if (patch.enabled === false && current.enabled) Object.assign(next, { enabled: false, disabledReason: 'DISABLED_BY_USER' });
  await updateEndpoint(trx, next);
  if (current.enabled && !next.enabled) await cancelPendingDeliveries(trx, id, 'Endpoint disabled by a user', now);
  return toWebhook(next);
}

/** Removes the endpoint with its delivery log; with `ifMatch`, only the version it names (412 with the current one). */
export async function deleteWebhook(ctx: Ctx, organizationId: string, id: string, opts: WriteOptions = {}): Promise<void> {
  if (opts.ifMatch === undefined) {
    if (!(await deleteEndpoint(ctx.database.db, organizationId, id))) throw notFound('Webhook');
    return;
  }
  await ctx.database.transaction(async (trx) => {
    await lockForCondition(ctx, trx, 'webhook_endpoints', organizationId, id, opts);
    checkCondition(ctx, opts, 'webhook', toWebhook(await requireEndpoint(trx, organizationId, id)));
    await deleteEndpoint(trx, organizationId, id);
  });
}

/** Operator deletion (CLI) by id alone. */
export async function deleteWebhookById(ctx: Ctx, id: string): Promise<void> {
  const endpoint = await findEndpointById(ctx.database.db, id);
  if (!endpoint) throw notFound('Webhook');
  await deleteWebhook(ctx, endpoint.organizationId, id);
}

/**
 * A new secret signs from now on; the one it replaces keeps signing too (a second v1) for 24 hours, so
 * receivers can switch without dropping a delivery. A second rotation inside the window drops the oldest.
 */
export async function rotateWebhookSecret(ctx: Ctx, trx: Executor, organizationId: string, id: string): Promise<Webhook> {
  const current = await requireEndpoint(trx, organizationId, id);
  const now = ctx.clock.now();
  const secret = generateWebhookSecret();
  const next: StoredEndpoint = {
    ...current,
    secretEnc: sealSecret(ctx.cipher, id, 'secret', secret),
    previousSecretEnc: sealSecret(ctx.cipher, id, 'previous_secret', openSecret(ctx.cipher, id, 'secret', current.secretEnc)),
    previousSecretExpiresAt: new Date(now.getTime() + ROTATION_WINDOW_MS).toISOString(),
    updatedAt: now.toISOString(),
  };
  await updateEndpoint(trx, next);
  return toWebhook(next, secret);
}

function toDelivery(d: StoredDelivery, attempts: StoredAttempt[]): WebhookDelivery {
  const last = attempts.at(-1);
  return {
    id: d.id,
    webhookId: d.endpointId,
    eventId: d.eventId,
    eventType: d.eventType,
    status: d.status,
    attempt: d.attempts,
    nextAttemptAt: d.status === 'PENDING' ? d.dueAt : null,
    durationMs: last?.durationMs ?? null,
    responseStatus: last?.responseStatus ?? null,
    responseExcerpt: last?.responseExcerpt ?? null,
    error: d.error ?? last?.error ?? null,
    attempts: attempts.map(({ deliveryId: _d, ...a }) => a),
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
  };
}

async function loadDelivery(db: Executor, endpointId: string, deliveryId: string): Promise<WebhookDelivery> {
  const found = await findDeliveryWithAttempts(db, endpointId, deliveryId);
  if (!found) throw notFound('Delivery');
  return toDelivery(found.delivery, found.attempts);
}

/**
 * Records a `webhook.test` event and queues its delivery to this endpoint only (the dispatcher's fan-out
 * skips test events), in one transaction. A disabled endpoint receives nothing, tests included.
 */
export async function sendTestEvent(ctx: Ctx, trx: Executor, caller: Caller, id: string): Promise<WebhookDelivery> {
  const endpoint = await requireEndpoint(trx, caller.organizationId, id);
  if (!endpoint.enabled) throw new AppError('CONFLICT', 'The webhook is disabled; enable it before sending a test event');
  const now = ctx.clock.now();
  const event = buildEvent({
    type: 'webhook.test',
    organizationId: caller.organizationId,
    object: 'webhook',
    objectId: id,
    description: 'Test event',
    changes: { before: {}, after: {} },
    actor: caller.actor,
    now,
  });
  await recordEvent(trx, event);
  const deliveryId = newId(now);
  const at = now.toISOString();
  await insertDelivery(trx, { id: deliveryId, organizationId: caller.organizationId, endpointId: id, eventId: event.id, eventType: event.type, dueAt: at, createdAt: at, updatedAt: at });
  return loadDelivery(trx, id, deliveryId);
}

export async function listWebhookDeliveries(ctx: Ctx & Pick<AppContext, 'cursorSeal'>, organizationId: string, id: string, query: ListDeliveriesQuery) {
  const db = ctx.database.db;
  await requireEndpoint(db, organizationId, id);
  const { rows, pagination } = await listDeliveries(db, id, { status: query.status, eventId: query.eventId }, listRequest(query, listCursors(ctx, organizationId)));
  return { deliveries: rows.map((d) => toDelivery(d.delivery, d.attempts)), pagination };
}

/** Re-sends a delivery: same delivery id, same event id and body, a new attempt with a fresh signature. */
export async function retryWebhookDelivery(ctx: Ctx, trx: Executor, organizationId: string, id: string, deliveryId: string): Promise<WebhookDelivery> {
  const endpoint = await requireEndpoint(trx, organizationId, id);
  if (!(await findDelivery(trx, id, deliveryId))) throw notFound('Delivery');
  if (!endpoint.enabled) throw new AppError('CONFLICT', 'The webhook is disabled; enable it before re-sending deliveries');
  if (!(await requeueDelivery(trx, deliveryId, ctx.clock.now().toISOString()))) {
    throw new AppError('CONFLICT', 'An attempt of this delivery is in progress; retry once it has finished');
  }
  return loadDelivery(trx, id, deliveryId);
}

/** Deletes finished deliveries older than 30 days, in small batches. */
export async function pruneDeliveryLog(ctx: Pick<AppContext, 'database' | 'clock'>): Promise<number> {
  const before = new Date(ctx.clock.now().getTime() - DELIVERY_LOG_RETENTION_MS).toISOString();
  let total = 0;
  for (;;) {
    const removed = await pruneDeliveries(ctx.database.db, before, 500);
    total += removed;
    if (removed < 500) return total;
  }
}
