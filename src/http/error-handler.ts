import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ERROR_DESCRIPTIONS, ERROR_STATUS, type ErrorCode, type FieldError } from '../errors.js';
import { isDatabaseBusy, isDatabaseOutOfResources, isDatabaseUnreachable } from '../db/database.js';
import { explainRepeatedParameters, toFieldErrors } from './validation.js';
import { extraFieldErrors } from './extra-field-errors.js';
import type { ErrorEnvelope } from './schemas.js';
import { redactPath, requestId } from './logging.js';
import { applySecurityHeaders } from './security-headers.js';
import { payloadTooLarge, type BodyLimits } from './body-limits.js';

/** Fastify's own errors (parsing, limits) mapped onto the contract's codes. */
const FASTIFY_CODES: Record<string, { code: ErrorCode; message: string }> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Send the body as application/json' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { code: 'INVALID_JSON', message: 'Content-Length does not match the body' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { code: 'INVALID_JSON', message: 'The body is empty; send a JSON object' },
  FST_ERR_CTP_INVALID_JSON_BODY: { code: 'INVALID_JSON', message: 'The body is not valid JSON' },
  FST_ERR_BAD_URL: { code: 'ROUTE_NOT_FOUND', message: 'The URL is malformed' },
  FST_ERR_MAX_PARAM_LENGTH: { code: 'ROUTE_NOT_FOUND', message: 'No route has a path segment this long' },
  FST_ERR_ASYNC_CONSTRAINT: { code: 'ROUTE_NOT_FOUND', message: 'No such route' },
};

/**
 * The database failing for reasons that are not the request's: a retryable 503 in the envelope, each with its log line.
 * Out of resources is logged as an error, for an operator has to act (free disk space, raise a limit).
 */
const DATABASE_REFUSALS: { matches: (err: unknown) => boolean; level: 'warn' | 'error'; log: string; retryAfter: string; message: string }[] = [
  { matches: isDatabaseUnreachable, level: 'warn', log: 'database unreachable', retryAfter: '1', message: 'The database is not reachable; retry shortly' },
  {
    matches: isDatabaseBusy,
    level: 'warn',
    log: 'database busy',
    retryAfter: '1',
    message: 'The database is busy with another writer (an import, a restore): the request was not carried out; retry shortly',
  },
  {
    matches: isDatabaseOutOfResources,
    level: 'error',
    log: 'database out of resources',
    retryAfter: '30',
    message: 'The database cannot take this work now (out of disk space, memory or connections): the request was not carried out; retry later',
  },
];

export function errorBody(request: FastifyRequest, code: ErrorCode, message: string, errors?: FieldError[], data?: Record<string, unknown>): ErrorEnvelope {
  return { status: false, code, message, ...(errors ? { errors } : {}), ...(data ? { data } : {}), requestId: String(request.id) };
}

function sendError(reply: FastifyReply, request: FastifyRequest, code: ErrorCode, message: string, errors?: FieldError[], data?: Record<string, unknown>) {
  return reply.code(ERROR_STATUS[code]).type('application/json; charset=utf-8').send(errorBody(request, code, message, errors, data));
}

/** The single place where any failure becomes an HTTP response in the error envelope. */
export function registerErrorHandling(app: FastifyInstance, bodyLimits: BodyLimits): void {
  app.setErrorHandler((raised: FastifyError | AppError, request, reply) => {
    // Fastify's own 413 (a chunked body read past the limit) says what the declared-length check says.
    const error = !(raised instanceof AppError) && raised.statusCode === 413 ? payloadTooLarge(bodyLimits, request.routeOptions.bodyLimit) : raised;
    if (error instanceof AppError) {
      if (error.headers) reply.headers(error.headers);
      if (error.status >= 500) request.log.error({ err: error }, 'request failed');
      return sendError(reply, request, error.code, error.message, error.errors, error.data);
    }
    const fe = error as FastifyError;
    if (fe.validation) {
      const part = fe.validationContext ?? 'body';
      const schemaErrors = toFieldErrors(fe.validation as Parameters<typeof toFieldErrors>[0], part);
      const errors = [...(part === 'querystring' ? explainRepeatedParameters(schemaErrors, request.query) : schemaErrors), ...extraFieldErrors(request)];
      const message = errors.length === 1 ? `${errors[0]!.field}: ${errors[0]!.message}` : `${errors.length} fields are invalid`;
      return sendError(reply, request, 'VALIDATION_FAILED', message, errors);
    }
    const mapped = fe.code ? FASTIFY_CODES[fe.code] : undefined;
    if (mapped) return sendError(reply, request, mapped.code, mapped.message);
    if (fe instanceof SyntaxError || (fe.statusCode === 400 && /JSON|prototype|constructor/i.test(fe.message))) {
      return sendError(reply, request, 'INVALID_JSON', 'The body is not valid JSON');
    }
    if (fe.statusCode === 415) return sendError(reply, request, 'UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json');
    const refusal = DATABASE_REFUSALS.find((r) => r.matches(error));
    if (refusal) {
      request.log[refusal.level]({ err: error }, refusal.log);
      reply.header('retry-after', refusal.retryAfter);
      return sendError(reply, request, 'SERVICE_UNAVAILABLE', refusal.message);
    }
    request.log.error({ err: error }, 'unexpected error');
    return sendError(reply, request, 'INTERNAL_ERROR', 'An unexpected error occurred');
  });

  // The path is echoed with its unsafe segments redacted: /leads/<an e-mail>/x must not come back in the body.
  app.setNotFoundHandler((request, reply) =>
    sendError(reply, request, 'ROUTE_NOT_FOUND', `No route ${request.method} ${redactPath(request.url.split('?')[0]!)}`),
  );
}

/**
 * Errors Fastify's router raises before any route or hook runs (a path that does not percent-decode, a path
 * parameter over maxParamLength): same envelope and headers as every other answer.
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  applySecurityHeaders(request, reply);
  const mapped = FASTIFY_CODES[error.code] ?? { code: 'ROUTE_NOT_FOUND', message: 'No such route' };
  void sendError(reply, request, mapped.code, mapped.message);
}

const CLIENT_ERRORS: Record<string, ErrorCode> = {
  ERR_HTTP_REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
  HPE_HEADER_OVERFLOW: 'HEADERS_TOO_LARGE',
};

/**
 * Failures Node detects before a request exists (a slow or idle client past its timeout, oversized headers,
 * bytes that are not HTTP): answered in the same envelope, straight onto the socket, which is then closed.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const code = CLIENT_ERRORS[err.code ?? ''] ?? 'MALFORMED_REQUEST';
  const status = ERROR_STATUS[code];
  const id = requestId({ headers: {} });
  const body = JSON.stringify({ status: false, code, message: ERROR_DESCRIPTIONS[code], requestId: id } satisfies ErrorEnvelope);
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${id}\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
