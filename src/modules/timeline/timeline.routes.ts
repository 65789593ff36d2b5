import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { requirePrincipal } from '../../http/auth.js';
import { IdParams, ok } from '../../http/schemas.js';
import type { Scope } from '../orgs/principal.js';
import { RecordParams } from '../objects/records.schemas.js';
import { TARGET_OBJECTS } from '../shared/item-target.js';
import { TimelineEnvelope, TimelineQuery } from './timeline.schemas.js';
import { readTimeline } from './timeline.service.js';

const description = (noun: string, scope: string) =>
  `The ${noun}'s history, newest first: its events (as webhooks deliver them, while retained: EVENT_RETENTION_DAYS), its notes (when the key also has notes:read) and its tasks (with tasks:read). \`types\` keeps some kinds of entry (\`types=note,task\`; an unknown one is 400, one the key may not read 403), \`createdAfter\`/\`createdBefore\` bound their \`at\` (strict). Cursor-paginated: pass \`pagination.nextCursor\` as \`after\`, with the same filters. Needs ${scope}; a trashed ${noun} is 404.`;

const BUILT_IN = [
  { object: 'lead', path: '/leads/:id/timeline', scope: 'leads:read', tag: 'Leads', summary: "A lead's timeline" },
  { object: 'account', path: '/accounts/:id/timeline', scope: 'accounts:read', tag: 'Accounts', summary: "An account's timeline" },
  { object: 'deal', path: '/deals/:id/timeline', scope: 'deals:read', tag: 'Deals', summary: "A deal's timeline" },
] as const satisfies readonly { object: (typeof TARGET_OBJECTS)[number]; path: string; scope: Scope; tag: string; summary: string }[];

/** GET /{leads|accounts|deals}/{id}/timeline and /objects/{object}/records/{id}/timeline (contract §9). */
export function registerTimelineRoutes(parent: FastifyInstance, ctx: AppContext): void {
  const app = parent.withTypeProvider<TypeBoxTypeProvider>();
  for (const r of BUILT_IN) {
    app.get(r.path, {
      config: { auth: { anyOf: [r.scope] } },
      schema: { tags: [r.tag], summary: r.summary, description: description(r.object, r.scope), params: IdParams, querystring: TimelineQuery, response: { 200: TimelineEnvelope } },
      handler: async (request) => ok(await readTimeline(ctx, requirePrincipal(request), { object: r.object, id: request.params.id }, request.query)),
    });
  }
  app.get('/objects/:object/records/:id/timeline', {
    config: { auth: { anyOf: ['records:read'] } },
    schema: { tags: ['Records'], summary: "A record's timeline", description: description('record', 'records:read'), params: RecordParams, querystring: TimelineQuery, response: { 200: TimelineEnvelope } },
    handler: async (request) => ok(await readTimeline(ctx, requirePrincipal(request), { object: 'record', id: request.params.id, objectSlug: request.params.object }, request.query)),
  });
}
