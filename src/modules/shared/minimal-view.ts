import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest, preSerializationHookHandler } from 'fastify';
import { Envelope, Id, Nullable, Timestamp } from '../../http/schemas.js';
import type { Scope } from '../orgs/principal.js';

// Contract §2: `*:write` does not imply `*:read`. A write that answers an item that existed before it (an
// update, a delete, a restore, an upsert hit, the current item of a 412) shows a caller without the item's read
// scope only the item's minimal view: what names it and what the write itself set, nothing the item stored.
// A create answers the whole new item to anyone: it was made from the caller's own body. The ETag of such an
// answer stays the full item's (If-Match needs it, and a digest reveals no field).

/** The fields of an item's minimal view, those of an item that has them. */
const ITEM_FIELDS = ['id', 'objectSlug', 'updatedAt', 'deletedAt'];

/**
 * Each kind of item, by its key in an answer (`data.lead`, a batch result's `record`, a tool's `task`): the scope
 * that reads it, and the fields its minimal view keeps. A webhook endpoint keeps the secret a rotation has just
 * set (the write's own product, shown once), a re-sent delivery what the retry set: neither keeps the endpoint's
 * URL and events nor the receiver's answers.
 */
const KINDS: Readonly<Record<string, { scope: Scope; fields: readonly string[] }>> = {
  lead: { scope: 'leads:read', fields: ITEM_FIELDS },
  account: { scope: 'accounts:read', fields: ITEM_FIELDS },
  deal: { scope: 'deals:read', fields: ITEM_FIELDS },
  record: { scope: 'records:read', fields: ITEM_FIELDS },
  note: { scope: 'notes:read', fields: ITEM_FIELDS },
  task: { scope: 'tasks:read', fields: ITEM_FIELDS },
  webhook: { scope: 'webhooks:read', fields: ['id', 'updatedAt', 'secret'] },
  delivery: { scope: 'webhooks:read', fields: ['id', 'webhookId', 'eventId', 'status', 'attempt', 'nextAttemptAt'] },
};

export const MinimalView = Type.Object(
  {
    id: Id(),
    objectSlug: Type.Optional(Type.String({ description: "A record's object slug (records only)." })),
    updatedAt: Timestamp('UTC instant of the last change: this write, for an item it changed.'),
    deletedAt: Nullable(Timestamp('When the item was deleted (it is in the trash), else null.')),
  },
  {
    $id: 'MinimalView',
    additionalProperties: false,
    description:
      'What a write answers about an item that existed before it (update, delete, restore, upsert hit, the current item of a 412) when the API key may write that kind of item but not read it (`leads:write` without `leads:read`…): its id and change times, none of its stored fields. Its ETag is the full item\'s, usable in If-Match.',
  },
);

/** A write's answer about an existing item: the whole item, or its minimal view for a key that may not read it. */
export const Written = (resource: TSchema, minimal: TSchema = Type.Ref(MinimalView)) => Type.Union([resource, minimal]);

/** The envelope of a route that writes an existing item (`data.<noun>`: Written). */
export const WrittenEnvelope = (noun: string, resource: TSchema) => Envelope(Type.Object({ [noun]: Written(resource) }));

function minimalView(fields: readonly string[], item: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(fields.filter((field) => field in item).map((field) => [field, item[field]]));
}

/**
 * `items` (an answer's `data`, a batch result, a tool's result) as a caller with `scopes` sees them after a
 * write of existing items: each item under a kind's key in its minimal view unless the scopes read that kind.
 */
export function seenAfterWrite<T extends Record<string, unknown>>(scopes: readonly Scope[], items: T): T {
  let seen = items;
  for (const [kind, { scope, fields }] of Object.entries(KINDS)) {
    const item = items[kind];
    if (typeof item !== 'object' || item === null || scopes.includes(scope)) continue;
    seen = { ...seen, [kind]: minimalView(fields, item as Record<string, unknown>) } as T;
  }
  return seen;
}

type Answer = { data?: Record<string, unknown> & { results?: unknown } };

/**
 * An answer of a writing route as the caller sees it. 201 is a create (its items new, made from the caller's
 * body); any other answer — 200 of an update, delete or restore, a 412's current item — is about existing
 * items, as is each batch result but a 201 one.
 */
function seenAnswer(scopes: readonly Scope[], status: number, payload: Answer): Answer {
  const data = payload.data;
  if (status === 201 || typeof data !== 'object' || data === null) return payload;
  const results = Array.isArray(data.results)
    ? { results: data.results.map((r: { status?: number } & Record<string, unknown>) => (r.status === 201 ? r : seenAfterWrite(scopes, r))) }
    : {};
  return { ...payload, data: { ...seenAfterWrite(scopes, data), ...results } };
}

const seenByCaller: preSerializationHookHandler<unknown> = (request: FastifyRequest, reply: FastifyReply, payload: unknown, done) => {
  const principal = request.principal;
  if (!principal || typeof payload !== 'object' || payload === null) return done(null, payload);
  done(null, seenAnswer(principal.key.scopes, reply.statusCode, payload as Answer));
};

/**
 * Every authenticated route that writes answers through `seenAnswer`, in one place and whatever the handler (a
 * replayed idempotent answer as well: it is shown as this caller may see it, never as its first caller did).
 * Serialization runs after the handler, so the ETag (entity-tags.ts) is still the full item's.
 */
export function registerMinimalViews(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!route.config?.auth || methods.every((m) => m === 'GET' || m === 'HEAD')) return;
    route.preSerialization = [...[route.preSerialization ?? []].flat(), seenByCaller];
  });
}
