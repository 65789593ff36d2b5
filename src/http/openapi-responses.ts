import type { RouteOptions } from 'fastify';
import { Type } from '@sinclair/typebox';
import { ERROR_DESCRIPTIONS, ERROR_STATUS, type ErrorCode } from '../errors.js';
import { ErrorEnvelope } from './schemas.js';

type Json = Record<string, unknown>;

/**
 * The error responses operations share, by name: each route lists the ones it can produce (derived from what
 * it declares in `addErrorResponses`), and the document refers to them in `components.responses`.
 */
const NAMED_ERRORS = {
  ValidationFailed: ['VALIDATION_FAILED'],
  InvalidBody: ['VALIDATION_FAILED', 'INVALID_JSON'],
  Unauthorized: ['UNAUTHORIZED'],
  Forbidden: ['INSUFFICIENT_SCOPE'],
  NotFound: ['NOT_FOUND'],
  IdempotencyKeyInUse: ['IDEMPOTENCY_KEY_IN_USE'],
  Conflict: ['CONFLICT'],
  ObjectConflict: ['CONFLICT', 'LIMIT_EXCEEDED', 'IDEMPOTENCY_KEY_IN_USE'],
  CursorExpired: ['CURSOR_EXPIRED'],
  PreconditionFailed: ['PRECONDITION_FAILED'],
  PayloadTooLarge: ['PAYLOAD_TOO_LARGE'],
  UnsupportedMediaType: ['UNSUPPORTED_MEDIA_TYPE'],
  IdempotencyKeyReused: ['IDEMPOTENCY_KEY_REUSED'],
  RateLimited: ['RATE_LIMITED'],
  InternalError: ['INTERNAL_ERROR'],
} as const satisfies Record<string, readonly ErrorCode[]>;
export type ErrorName = keyof typeof NAMED_ERRORS;

/** One realistic body per code, as the error handler writes it. */
const EXAMPLE_ERRORS: Partial<Record<ErrorCode, Json>> = {
  VALIDATION_FAILED: { message: 'email: must be a valid e-mail address', errors: [{ field: 'email', code: 'invalid_format', message: 'must be a valid e-mail address' }] },
  INVALID_JSON: { message: 'The body is not valid JSON' },
  UNAUTHORIZED: { message: 'The API key is invalid, revoked or expired' },
  INSUFFICIENT_SCOPE: { message: 'This operation needs the scope leads:write' },
  NOT_FOUND: { message: 'Lead not found' },
  IDEMPOTENCY_KEY_IN_USE: { message: 'A request with this Idempotency-Key is still being processed; retry shortly' },
  IDEMPOTENCY_KEY_REUSED: { message: 'This Idempotency-Key was already used with a different request' },
  CURSOR_EXPIRED: { message: 'Events after this cursor are past retention (EVENT_RETENTION_DAYS); start again without `after`' },
  RATE_LIMITED: { message: 'Rate limit of 120 requests per minute exceeded' },
  PAYLOAD_TOO_LARGE: { message: "The body is larger than this route's limit of 1048576 bytes; the batch routes (…/batch) accept up to 10485760 bytes" },
  PRECONDITION_FAILED: {
    message: 'The lead has changed since the version named by If-Match; data.lead is the current one',
    data: { lead: { id: '6751a3f0c2b8e4d1a9f03b21', name: 'Ada Lovelace', status: 'CONTACTED', updatedAt: '2026-11-21T10:05:00.000Z' } },
  },
};
const EXAMPLE_REQUEST_ID = 'req-8f14e45fceea167a';

const describeCodes = (codes: readonly ErrorCode[]) => codes.map((c) => `\`${c}\`: ${ERROR_DESCRIPTIONS[c]}`).join('\n\n');

/**
 * A named error response for a route's `schema.response` (e.g. `{ 409: errorResponse('Conflict') }`): it serializes
 * through the one envelope and appears in the document as `#/components/responses/<name>`.
 */
export const errorResponse = (name: ErrorName) => ({ ...Type.Ref(ErrorEnvelope), description: describeCodes(NAMED_ERRORS[name]) });

/**
 * Adds the error responses every route can produce, derived from what the route declares (auth, body,
 * path id, idempotency), so the document lists them without each route repeating them. They also serialize
 * the route's error replies through the one envelope schema.
 */
export function addErrorResponses(route: RouteOptions): void {
  if (!route.schema || route.schema.hide) return;
  const schema = route.schema as { response?: Json; body?: unknown; params?: unknown; querystring?: unknown };
  const response = (schema.response ??= {});
  const config = route.config as { auth?: unknown; idempotent?: boolean } | undefined;
  const add = (name: ErrorName) => {
    const status = ERROR_STATUS[NAMED_ERRORS[name][0]];
    if (!(status in response)) response[status] = errorResponse(name);
  };
  if (schema.body) add('InvalidBody');
  else if (schema.querystring || schema.params) add('ValidationFailed');
  if (config?.auth) {
    add('Unauthorized');
    add('Forbidden');
    add('RateLimited');
  }
  if (schema.params) add('NotFound');
  if (schema.body) {
    add('PayloadTooLarge');
    add('UnsupportedMediaType');
  }
  if (config?.idempotent) {
    add('IdempotencyKeyInUse');
    add('IdempotencyKeyReused');
  }
  add('InternalError');
}

const header = (description: string, schema: Json, example: unknown) => ({ description, schema, example });

/** Response headers (components.headers): the request id on every answer, the rate limit on authenticated ones. */
export const RESPONSE_HEADERS = {
  'X-Request-Id': header('Id of this request, in every response and in the error body; a safe incoming X-Request-Id is kept.', { type: 'string' }, EXAMPLE_REQUEST_ID),
  'RateLimit-Policy': header('The key\'s quota (IETF draft): `q` requests per `w` seconds.', { type: 'string' }, '"default";q=120;w=60'),
  RateLimit: header('What is left of the quota (IETF draft): `r` requests remaining, reset in `t` seconds.', { type: 'string' }, '"default";r=119;t=60'),
  'X-RateLimit-Limit': header('Requests allowed per minute for this key.', { type: 'integer' }, 120),
  'X-RateLimit-Remaining': header('Requests left in the current window.', { type: 'integer' }, 119),
  'X-RateLimit-Reset': header('Unix time (seconds) when the window resets.', { type: 'integer' }, 1795255260),
  'Retry-After': header('Seconds to wait before retrying.', { type: 'integer' }, 42),
  ETag: header(
    'Strong entity tag of the resource in the body (on 412: of the current resource; of the whole item when the body is its minimal view). Opaque: a keyed MAC of the resource, so it reveals none of its fields and a client cannot compute it. Send it back as If-Match on PATCH, DELETE or restore, or as If-None-Match on GET.',
    { type: 'string' },
    '"k3Vq1mW0u8m1bq6cS2C3oW4n4cJ0aZp"',
  ),
  'Idempotent-Replayed': header(
    '`true` when this answer is the stored response of an earlier request with the same Idempotency-Key: nothing was done again. Absent on a first answer.',
    { type: 'string', enum: ['true'] },
    'true',
  ),
};
type HeaderName = keyof typeof RESPONSE_HEADERS;
const RATE_LIMIT_HEADERS: HeaderName[] = ['RateLimit-Policy', 'RateLimit', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'];

const headerRefs = (names: HeaderName[]) => Object.fromEntries(names.map((n) => [n, { $ref: `#/components/headers/${n}` }]));

/**
 * Headers of a response: X-Request-Id always; the rate limit once the key is known (every status but 401; a 413
 * has it only when refused while its body was read, which its description says: a declared Content-Length over
 * the limit is answered before the key is checked);
 * the ETag on a single resource's success, 304 and 412 (`tagged`: the operation's route declares `config.etag`);
 * Idempotent-Replayed on the success of an operation that takes an Idempotency-Key (`idempotent`).
 */
export function responseHeaders(status: string, authenticated: boolean, tagged = false, idempotent = false): Json {
  const names: HeaderName[] = ['X-Request-Id'];
  if (authenticated && status !== '401') names.push(...RATE_LIMIT_HEADERS);
  if (status === '429') names.push('Retry-After');
  if (status === '412' || (tagged && (status.startsWith('2') || status === '304'))) names.push('ETag');
  if (idempotent && status.startsWith('2')) names.push('Idempotent-Replayed');
  return headerRefs(names);
}

function errorExample(codes: readonly ErrorCode[]): Json {
  const code = codes[0]!;
  return { status: false, code, message: ERROR_DESCRIPTIONS[code], ...EXAMPLE_ERRORS[code], requestId: EXAMPLE_REQUEST_ID };
}

/** components.responses: one per named error in use, with its codes, the shared envelope and an example. */
export function namedErrorResponses(used: ReadonlySet<string>): Record<string, Json> {
  const entries = Object.entries(NAMED_ERRORS).filter(([name]) => used.has(name)).map(([name, codes]) => {
    const status = String(ERROR_STATUS[codes[0]]);
    return [name, {
      description: describeCodes(codes),
      headers: responseHeaders(status, status !== '401'),
      content: { 'application/json': { schema: { $ref: `#/components/schemas/${ErrorEnvelope.$id}` }, example: errorExample(codes) } },
    }];
  });
  return Object.fromEntries(entries);
}

/** The name of the shared response a generated error response stands for (matched by its generated description). */
const NAME_BY_DESCRIPTION = new Map(Object.entries(NAMED_ERRORS).map(([name, codes]) => [describeCodes(codes), name]));
export const namedErrorOf = (response: { description?: string }): string | undefined =>
  response.description === undefined ? undefined : NAME_BY_DESCRIPTION.get(response.description);
