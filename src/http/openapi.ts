import type { FastifyInstance, RouteOptions } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { Type } from '@sinclair/typebox';
import { ERROR_DESCRIPTIONS, type ErrorCode } from '../errors.js';
import { ErrorEnvelope } from './schemas.js';
import { forbidFraming } from './security-headers.js';

const ErrorRef = Type.Ref(ErrorEnvelope);

function errorResponse(codes: ErrorCode[]) {
  return { ...ErrorRef, description: codes.map((c) => `\`${c}\`: ${ERROR_DESCRIPTIONS[c]}`).join('\n\n') };
}

/**
 * Adds the error responses every route can produce, derived from what the route declares (auth, body,
 * path id, idempotency), so the OpenAPI document lists them without each route repeating them.
 */
function addErrorResponses(route: RouteOptions): void {
  if (!route.schema || route.schema.hide) return;
  const schema = route.schema as { response?: Record<string, unknown>; body?: unknown; params?: unknown; querystring?: unknown };
  const response = (schema.response ??= {});
  const config = route.config as { auth?: unknown; idempotent?: boolean } | undefined;
  const add = (status: number, codes: ErrorCode[]) => {
    if (!(status in response)) response[status] = errorResponse(codes);
  };
  if (schema.body || schema.querystring || schema.params) {
    add(400, schema.body ? ['VALIDATION_FAILED', 'INVALID_JSON'] : ['VALIDATION_FAILED']);
  }
  if (config?.auth) {
    add(401, ['UNAUTHORIZED']);
    add(403, ['INSUFFICIENT_SCOPE']);
    add(429, ['RATE_LIMITED']);
  }
  if (schema.params) add(404, ['NOT_FOUND']);
  if (schema.body) {
    add(413, ['PAYLOAD_TOO_LARGE']);
    add(415, ['UNSUPPORTED_MEDIA_TYPE']);
  }
  if (config?.idempotent) {
    add(409, ['IDEMPOTENCY_KEY_IN_USE']);
    add(422, ['IDEMPOTENCY_KEY_REUSED']);
  }
  add(500, ['INTERNAL_ERROR']);
}

export const API_PREFIX = '/api/public/v1';

export async function registerOpenApi(app: FastifyInstance, opts: { version: string }): Promise<void> {
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
      },
      components: {
        securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An API key: crm_live_…' } },
      },
      security: [{ bearer: [] }],
      tags: [
        { name: 'Leads' },
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
        { name: 'Identity', description: 'The calling key.' },
      ],
    },
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { validatorUrl: null, deepLinking: true },
    staticCSP: true,
    transformStaticCSP: forbidFraming,
  } as never);
}
