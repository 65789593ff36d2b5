import { Type, type Static } from '@sinclair/typebox';
import { Envelope, Id, Nullable, StringEnum, Timestamp } from '../../http/schemas.js';
import { Pagination } from '../../lib/pagination.js';
import { CREATION_SORTS, ListParams, SortQuery, TIME_SORTS } from '../../lib/list-request.js';
import { EVENT_TYPES } from '../events/events.js';
import { Written } from '../shared/minimal-view.js';

export const ALL_EVENTS = '*';
export const EVENT_FILTERS = [...EVENT_TYPES, ALL_EVENTS] as const;

/** Why an endpoint is disabled: by a user, by a 410 Gone answer, or after failing every attempt for 3 days. */
export const DISABLED_REASONS = ['DISABLED_BY_USER', 'ENDPOINT_GONE', 'FAILING_FOR_3_DAYS'] as const;
export type DisabledReason = (typeof DISABLED_REASONS)[number];

export const DELIVERY_STATUSES = ['PENDING', 'SENDING', 'SUCCEEDED', 'FAILED'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];

const url = Type.String({
  format: 'uri',
  maxLength: 2048,
  description: 'https URL resolving to public addresses only (checked now and again at every connection).',
});
const events = Type.Array(StringEnum(EVENT_FILTERS), {
  minItems: 1,
  maxItems: EVENT_FILTERS.length,
  uniqueItems: true,
  description: 'Event types to receive, or ["*"] for all of them.',
});
const description = Nullable(Type.String({ maxLength: 500, description: 'Free text shown in listings.' }));
const enabled = Type.Boolean({ description: 'false stops deliveries (pending retries are cancelled); true re-enables and clears the failure flag.' });

export const CreateWebhookBody = Type.Object(
  { url, events, description: Type.Optional(description), enabled: Type.Optional(enabled) },
  { additionalProperties: false, examples: [{ url: 'https://example.com/hooks/crm', events: ['lead.created', 'lead.updated'], description: 'Sales sync' }] },
);
export type CreateWebhookBody = Static<typeof CreateWebhookBody>;

export const UpdateWebhookBody = Type.Partial(Type.Object({ url, events, description, enabled }), {
  additionalProperties: false,
  minProperties: 1,
  description: 'Only the fields sent change.',
});
export type UpdateWebhookBody = Static<typeof UpdateWebhookBody>;

export const Webhook = Type.Object(
  {
    id: Id(),
    url: Type.String(),
    events: Type.Array(Type.String()),
    description: Nullable(Type.String()),
    enabled: Type.Boolean(),
    disabledReason: Nullable(StringEnum(DISABLED_REASONS, { description: 'Why the endpoint is disabled; null while enabled.' })),
    failingSince: Nullable(Timestamp('First failed attempt of the current unbroken run of failures; null after a success.')),
    previousSecretExpiresAt: Nullable(Timestamp('Until then deliveries are also signed with the secret before the last rotation.')),
    secret: Type.Optional(Type.String({ description: 'The signing secret (whsec_…): only in the answers of create and rotate-secret.' })),
    createdAt: Timestamp('UTC instant of creation.'),
    updatedAt: Timestamp('UTC instant of the last change.'),
  },
  { $id: 'Webhook' },
);
export type Webhook = Static<typeof Webhook>;

export const DeliveryAttempt = Type.Object({
  attempt: Type.Integer({ description: '1 for the first attempt.' }),
  startedAt: Timestamp('When the request was sent.'),
  durationMs: Type.Integer(),
  responseStatus: Nullable(Type.Integer({ description: 'HTTP status, null when no response arrived.' })),
  responseExcerpt: Nullable(Type.String({ description: 'The first kilobyte of the response body.' })),
  error: Nullable(Type.String({ description: 'Why the attempt failed without a usable answer (timeout, redirect, connection reset…).' })),
  succeeded: Type.Boolean(),
});

export const WebhookDelivery = Type.Object(
  {
    id: Id('Delivery id: the X-Service-Delivery header, the same for every attempt of this event to this endpoint.'),
    webhookId: Id(),
    eventId: Type.String({ description: 'The event id (evt_…): the body `id` and the webhook-id header.' }),
    eventType: Type.String(),
    status: StringEnum(DELIVERY_STATUSES),
    attempt: Type.Integer({ description: 'Number of the latest attempt (0 before the first).' }),
    nextAttemptAt: Nullable(Timestamp('When the next attempt is due (PENDING only).')),
    durationMs: Nullable(Type.Integer({ description: 'Duration of the latest attempt.' })),
    responseStatus: Nullable(Type.Integer({ description: 'HTTP status of the latest attempt.' })),
    responseExcerpt: Nullable(Type.String({ description: 'First kilobyte of the latest response body.' })),
    error: Nullable(Type.String({ description: 'Latest error, or why the delivery was given up.' })),
    attempts: Type.Array(DeliveryAttempt, { description: 'Every attempt, oldest first.' }),
    createdAt: Timestamp('When the event was fanned out to this endpoint.'),
    updatedAt: Timestamp('UTC instant of the last change.'),
  },
  { $id: 'WebhookDelivery' },
);
export type WebhookDelivery = Static<typeof WebhookDelivery>;

export const ListWebhooksQuery = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean({ description: 'Only enabled (true) or disabled (false) endpoints, whatever disabled them (disabledReason).' })),
    eventType: Type.Optional(StringEnum(EVENT_TYPES, { description: 'Only the endpoints subscribed to this event type: those listing it and those subscribed to every event (["*"]).' })),
    ...ListParams,
    ...SortQuery(TIME_SORTS),
  },
  { additionalProperties: false },
);
export type ListWebhooksQuery = Static<typeof ListWebhooksQuery>;

export const ListDeliveriesQuery = Type.Object(
  {
    status: Type.Optional(StringEnum(DELIVERY_STATUSES, { description: 'Only deliveries in this state.' })),
    eventId: Type.Optional(Type.String({ maxLength: 64, description: 'Only the delivery of this event.' })),
    ...ListParams,
    ...SortQuery(CREATION_SORTS),
  },
  { additionalProperties: false },
);
export type ListDeliveriesQuery = Static<typeof ListDeliveriesQuery>;

export const DeliveryParams = Type.Object({
  id: Type.String({ description: 'Webhook id.' }),
  deliveryId: Type.String({ description: 'Delivery id.' }),
});

/** What a change of an existing endpoint answers a key with webhooks:write but not webhooks:read (minimal-view.ts). */
export const MinimalWebhook = Type.Object(
  {
    id: Id(),
    updatedAt: Timestamp('UTC instant of the last change: this write.'),
    secret: Type.Optional(Type.String({ description: 'The new signing secret (rotate-secret only): shown once, to whoever rotated it.' })),
  },
  {
    $id: 'MinimalWebhook',
    additionalProperties: false,
    description: "What an update or a secret rotation answers about an endpoint when the API key has webhooks:write but not webhooks:read: its id, the change time and a rotation's new secret, not the endpoint's URL or events. Its ETag is the full endpoint's, usable in If-Match.",
  },
);

/** What re-sending a delivery answers a key with webhooks:write but not webhooks:read: not the receiver's answers. */
export const MinimalDelivery = Type.Object(
  {
    id: Id(),
    webhookId: Id(),
    eventId: Type.String(),
    status: StringEnum(DELIVERY_STATUSES),
    attempt: Type.Integer(),
    nextAttemptAt: Nullable(Timestamp('When the re-sent attempt is due.')),
  },
  {
    $id: 'MinimalDelivery',
    additionalProperties: false,
    description: 'What re-sending a delivery answers when the API key has webhooks:write but not webhooks:read: what the retry set, not the attempts or the receiver\'s answers.',
  },
);

export const WebhookEnvelope = Envelope(Type.Object({ webhook: Type.Ref(Webhook) }));
/** An existing endpoint changed: whole, or its minimal view. */
export const WrittenWebhookEnvelope = Envelope(Type.Object({ webhook: Written(Type.Ref(Webhook), Type.Ref(MinimalWebhook)) }));
export const WebhookListEnvelope = Envelope(Type.Object({ webhooks: Type.Array(Type.Ref(Webhook)), pagination: Type.Ref(Pagination) }));
export const DeletedWebhookEnvelope = Envelope(Type.Object({ webhook: Type.Object({ id: Id(), deleted: Type.Literal(true) }) }));
export const DeliveryEnvelope = Envelope(Type.Object({ delivery: Type.Ref(WebhookDelivery) }));
/** A delivery re-sent: whole, or its minimal view. */
export const WrittenDeliveryEnvelope = Envelope(Type.Object({ delivery: Written(Type.Ref(WebhookDelivery), Type.Ref(MinimalDelivery)) }));
export const DeliveryListEnvelope = Envelope(
  Type.Object({ deliveries: Type.Array(Type.Ref(WebhookDelivery)), pagination: Type.Ref(Pagination) }),
);
