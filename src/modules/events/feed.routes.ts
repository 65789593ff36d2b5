import type { FastifyInstance, FastifyReply } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import { requirePrincipal } from '../../http/auth.js';
import { errorResponse } from '../../http/openapi-responses.js';
import { Envelope } from '../../http/schemas.js';
import { WEBHOOK_EVENT_SCHEMA } from './events.openapi.js';
import { FEED_EVENT_TYPES, FEED_SCOPES, readEventFeed } from './feed.service.js';

const MAX_FEED_LIMIT = 1000;

const FeedQuery = Type.Object(
  {
    after: Type.Optional(Type.String({ maxLength: 200, description: 'The `nextCursor` of the previous page, unchanged (it is sealed for the organization: another one, altered or made up, is `400`). Without it: from the oldest retained event.' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_FEED_LIMIT, default: 100, description: `Events per page (max ${MAX_FEED_LIMIT}).` })),
    types: Type.Optional(Type.String({ maxLength: 1000, description: `Comma-separated event types (default: every type the key can read): ${FEED_EVENT_TYPES.join(', ')}.` })),
  },
  { additionalProperties: false },
);

/** The webhook body (events.openapi.ts), shared by reference: the document's `WebhookEvent`. */
export const WebhookEventSchema = Type.Unsafe<Record<string, unknown>>({ $id: 'WebhookEvent', ...WEBHOOK_EVENT_SCHEMA });

const FeedEnvelope = Envelope(
  Type.Object({
    events: Type.Array(Type.Ref(WebhookEventSchema), {
      description: 'Oldest first; each exactly the body webhooks deliver, with the same `id`.',
    }),
    nextCursor: Type.String({ description: 'Opaque; pass it back as `after`. Present on an empty page too: poll with it. A page shorter than `limit` moves it to the end of the outbox (past other organizations\' events), so a quiet reader does not expire.' }),
  }),
);

const DESCRIPTION = `Every change of the organization's data, in commit order, as the same bodies (and ids) webhooks deliver. Follow \`nextCursor\` until a page comes back empty, then keep polling with it: every committed event appears exactly once, also under concurrent writers. A key sees the events of the resources it can read (\`leads:read\` → \`lead.*\`, and so on); \`webhook.test\` events are not in the feed. Events are retained at least EVENT_RETENTION_DAYS (30 by default); a cursor older than that answers \`410 CURSOR_EXPIRED\`. docs/sync.md explains how to build a sync on it.`;

export function registerFeedRoutes(parent: FastifyInstance, ctx: AppContext): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  app.get('/events', {
    config: { auth: { anyOf: FEED_SCOPES } },
    schema: {
      tags: ['Events'],
      summary: 'Read the change feed',
      description: DESCRIPTION,
      querystring: FeedQuery,
      response: { 200: FeedEnvelope, 410: errorResponse('CursorExpired') },
    },
    handler: async (request, reply) => {
      const page = await readEventFeed(ctx, requirePrincipal(request), { ...request.query, limit: request.query.limit ?? 100 });
      // The stored bodies go out as they are (the bytes webhooks sign), not parsed and serialized again.
      const body = `{"status":true,"code":"SUCCESS","data":{"events":[${page.events.join(',')}],"nextCursor":${JSON.stringify(page.nextCursor)}}}`;
      return (reply as FastifyReply).type('application/json; charset=utf-8').send(body);
    },
  });
}
