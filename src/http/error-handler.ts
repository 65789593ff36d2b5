import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ERROR_STATUS, type ErrorCode, type FieldError } from '../errors.js';
import { toFieldErrors } from './validation.js';
import type { ErrorEnvelope } from './schemas.js';

/** Fastify's own errors (parsing, limits) mapped onto the contract's codes. */
const FASTIFY_CODES: Record<string, { code: ErrorCode; message: string }> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { code: 'UNSUPPORTED_MEDIA_TYPE', message: 'Send the body as application/json' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { code: 'INVALID_JSON', message: 'Content-Length does not match the body' },
  FST_ERR_CTP_BODY_TOO_LARGE: { code: 'PAYLOAD_TOO_LARGE', message: 'The body is larger than the limit' },
  FST_ERR_CTP_EMPTY_JSON_BODY: { code: 'INVALID_JSON', message: 'The body is empty; send a JSON object' },
  FST_ERR_CTP_INVALID_JSON_BODY: { code: 'INVALID_JSON', message: 'The body is not valid JSON' },
  FST_ERR_BAD_URL: { code: 'ROUTE_NOT_FOUND', message: 'The URL is malformed' },
  FST_ERR_ASYNC_CONSTRAINT: { code: 'ROUTE_NOT_FOUND', message: 'No such route' },
};

export function errorBody(request: FastifyRequest, code: ErrorCode, message: string, errors?: FieldError[]): ErrorEnvelope {
  return { status: false, code, message, ...(errors ? { errors } : {}), requestId: String(request.id) };
}

function sendError(reply: FastifyReply, request: FastifyRequest, code: ErrorCode, message: string, errors?: FieldError[]) {
  return reply.code(ERROR_STATUS[code]).type('application/json; charset=utf-8').send(errorBody(request, code, message, errors));
}

/** The single place where any failure becomes an HTTP response in the error envelope. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError | AppError, request, reply) => {
    if (error instanceof AppError) {
      if (error.headers) reply.headers(error.headers);
      if (error.status >= 500) request.log.error({ err: error }, 'request failed');
      return sendError(reply, request, error.code, error.message, error.errors);
    }
    const fe = error as FastifyError;
    if (fe.validation) {
      const errors = toFieldErrors(fe.validation as Parameters<typeof toFieldErrors>[0], fe.validationContext ?? 'body');
      const message = errors.length === 1 ? `${errors[0]!.field}: ${errors[0]!.message}` : `${errors.length} fields are invalid`;
      return sendError(reply, request, 'VALIDATION_FAILED', message, errors);
    }
    const mapped = fe.code ? FASTIFY_CODES[fe.code] : undefined;
    if (mapped) return sendError(reply, request, mapped.code, mapped.message);
    if (fe instanceof SyntaxError || (fe.statusCode === 400 && /JSON|prototype|constructor/i.test(fe.message))) {
      return sendError(reply, request, 'INVALID_JSON', 'The body is not valid JSON');
    }
    if (fe.statusCode === 413) return sendError(reply, request, 'PAYLOAD_TOO_LARGE', 'The body is larger than the limit');
    if (fe.statusCode === 415) return sendError(reply, request, 'UNSUPPORTED_MEDIA_TYPE', 'Send the body as application/json');
    request.log.error({ err: error }, 'unexpected error');
    return sendError(reply, request, 'INTERNAL_ERROR', 'An unexpected error occurred');
  });

  app.setNotFoundHandler((request, reply) =>
    sendError(reply, request, 'ROUTE_NOT_FOUND', `No route ${request.method} ${request.url.split('?')[0]}`),
  );
}
