import type { FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { finishDocument, withOperationId, type WebhookEvents } from './openapi-document.js';
import { addErrorResponses } from './openapi-responses.js';
import { ErrorEnvelope } from './schemas.js';
import { docsPageCsp } from './security-headers.js';

export const API_PREFIX = '/api/public/v1';

export async function registerOpenApi(app: FastifyInstance, opts: { version: string; webhookEvents: WebhookEvents }): Promise<void> {
  app.addSchema(ErrorEnvelope);
  app.addHook('onRoute', addErrorResponses);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'CRM public API',
        version: opts.version,
        description: [
          'Leads, accounts, deals and custom-object records, with signed webhooks.',
          'Every request except this document and the health probes needs `Authorization: Bearer <API key>`.',
          'Success: `{status: true, code: "SUCCESS", data}`; errors: `{status: false, code, message, errors?, requestId}`.',
          'Rate limit: 120 requests per minute per key (IETF `RateLimit`/`RateLimit-Policy` and `X-RateLimit-*` headers; 429 with `Retry-After`).',
        ].join('\n\n'),
        license: { name: 'MIT', identifier: 'MIT' },
      },
      // Relative: the document describes the server that serves it, wherever it is deployed; paths carry the prefix.
      servers: [{ url: '/', description: 'The server that serves this document' }],
      components: {
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An API key: crm_live_…' } },
      },
      security: [{ bearer: [] }],
      tags: [
        { name: 'Leads', description: 'People who may buy. E-mail and phone are encrypted at rest; `q` looks them up exactly through a blind index; a lead with the same e-mail or phone as an older one links to it (`duplicateOf`).' },
        { name: 'Accounts', description: 'Companies you sell to. E-mail and phone are encrypted at rest; `q` looks them up exactly through a blind index.' },
        {
          name: 'Deals',
          description:
            'Opportunities moving through the organization\'s ordered deal stages (GET /deal-stages). Amounts are exact decimal strings with an ISO 4217 currency; expectedCloseDate is date-only.',
        },
        { name: 'Custom objects', description: 'Definitions of your own record types: fields, stages, a due date.' },
        { name: 'Records', description: 'Records of custom objects. Fetch this document with your API key to get typed schemas of your objects.' },
        { name: 'Webhooks', description: 'Endpoints that receive signed events, their delivery log and re-sends (docs/webhooks.md).' },
        { name: 'Privacy', description: 'Erasure of a data subject and the access-request export; scopes privacy:write / privacy:read, never implied by others (docs/privacy.md).' },
        { name: 'Users', description: 'The people of your organization (scope users:read): the ids `ownerId` takes, with names and work e-mails.' },
        { name: 'Identity', description: 'The calling key.' },
      ],
    },
    transform: withOperationId(API_PREFIX),
    transformObject: finishDocument(opts.webhookEvents),
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { validatorUrl: null, deepLinking: true },
    staticCSP: true,
    transformStaticCSP: docsPageCsp,
  } as never);
}
