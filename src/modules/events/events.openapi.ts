import { EVENT_TYPES, ENCRYPTED, type EventType } from './events.js';

type Json = Record<string, unknown>;

/** The body every delivery carries (CrmEvent in events.ts, contract §5). */
export const WEBHOOK_EVENT_SCHEMA: Json = {
  type: 'object',
  description: 'A webhook body: what happened, to which record, what changed and who did it. E-mail and phone values read "[encrypted]".',
  properties: {
    id: { type: 'string', description: 'Event id (= the webhook-id header); the same on every retry.', examples: ['evt_3f2b9c1d0a4e5f6a7b8c9d0e'] },
    type: { type: 'string', enum: [...EVENT_TYPES] },
    createdAt: { type: 'string', format: 'date-time' },
    organization: { type: 'string', description: 'Organization id.', examples: ['6650f0a1a1b2c3d4e5f60701'] },
    data: {
      type: 'object',
      properties: {
        object: { type: 'string', description: 'lead, account, deal, record or webhook.', examples: ['lead'] },
        id: { type: 'string', description: 'Id of the item the event is about.' },
        description: { type: 'string', examples: ['Lead created'] },
        changes: {
          type: 'object',
          description: 'The changed fields only, before and after.',
          properties: { before: { type: 'object', additionalProperties: true }, after: { type: 'object', additionalProperties: true } },
          required: ['before', 'after'],
        },
        actor: {
          type: 'object',
          properties: {
            type: { type: 'string', enum: ['API_KEY', 'USER', 'SYSTEM'] },
            id: { type: 'string' },
            channel: { type: 'string', enum: ['API', 'UI', 'MCP', 'COPILOT'] },
          },
          required: ['type', 'id', 'channel'],
        },
        objectSlug: { type: 'string', description: 'The custom object of a record event.' },
      },
      required: ['object', 'id', 'description', 'changes', 'actor'],
    },
  },
  required: ['id', 'type', 'createdAt', 'organization', 'data'],
};

const SIGNATURE_HEADERS: [string, string, string][] = [
  ['X-Service-Event', 'The event type.', 'lead.created'],
  ['X-Service-Delivery', 'Id of this delivery (one event to one endpoint); the same on every retry.', '6650f0c9aa11bb22cc33dd44'],
  ['X-Service-Signature', '`t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<raw body>")>`; two `v1` during a rotation (docs/webhooks.md).', 't=1795255200,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd'],
  ['webhook-id', 'The event id, for Standard Webhooks verifiers.', 'evt_3f2b9c1d0a4e5f6a7b8c9d0e'],
  ['webhook-timestamp', 'The same `t`.', '1795255200'],
  ['webhook-signature', 'Standard Webhooks signature(s): `v1,<base64 HMAC-SHA256>`, space-separated during a rotation.', 'v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4='],
];

const camel = (type: string) => type.split(/[._]/).map((w, i) => (i === 0 ? w : w.charAt(0).toUpperCase() + w.slice(1))).join('');

function example(type: EventType): Json {
  const [object = type, action = ''] = type.split('.');
  return {
    id: 'evt_3f2b9c1d0a4e5f6a7b8c9d0e',
    type,
    createdAt: '2026-11-21T10:00:00.000Z',
    organization: '6650f0a1a1b2c3d4e5f60701',
    data: {
      object,
      id: '6650f0c8f1e2d3c4b5a69788',
      description: `${object.charAt(0).toUpperCase()}${object.slice(1)} ${action.replace('_', ' ')}`,
      changes: { before: {}, after: { name: 'Ada Lovelace', email: ENCRYPTED } },
      actor: { type: 'API_KEY', id: '6650f0a3a1b2c3d4e5f60703', channel: 'API' },
    },
  };
}

/** OpenAPI 3.1 `webhooks`: one entry per event type, with its signed headers and body. */
export function webhooksSection(schemaRef: string): Json {
  return Object.fromEntries(
    EVENT_TYPES.map((type) => [
      type,
      {
        post: {
          operationId: `${camel(type)}Event`,
          summary: `${type} event`,
          tags: ['Webhooks'],
          security: [],
          parameters: SIGNATURE_HEADERS.map(([name, description, value]) => ({ in: 'header', name, required: true, description, schema: { type: 'string' }, example: name === 'X-Service-Event' ? type : value })),
          requestBody: {
            required: true,
            content: { 'application/json': { schema: { allOf: [{ $ref: schemaRef }, { type: 'object', properties: { type: { const: type } } }] }, example: example(type) } },
          },
          responses: {
            '200': { description: 'Any 2xx within the timeout (WEBHOOK_TIMEOUT_MS, 10 s by default) acknowledges the delivery.' },
            '400': { description: 'A rejected delivery (for example a bad signature) is retried with backoff, as is any other non-2xx answer.' },
          },
        },
      },
    ]),
  );
}
