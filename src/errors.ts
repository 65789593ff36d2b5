/** Stable, documented error codes (contract §1). The HTTP status of each lives here and nowhere else. */
export const ERROR_STATUS = {
  UNAUTHORIZED: 401,
  INSUFFICIENT_SCOPE: 403,
  VALIDATION_FAILED: 400,
  INVALID_JSON: 400,
  MALFORMED_REQUEST: 400,
  UNSUPPORTED_MEDIA_TYPE: 415,
  PAYLOAD_TOO_LARGE: 413,
  NOT_FOUND: 404,
  ROUTE_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  REQUEST_TIMEOUT: 408,
  CONFLICT: 409,
  LIMIT_EXCEEDED: 409,
  EXTERNAL_ID_TAKEN: 409,
  CURSOR_EXPIRED: 410,
  PRECONDITION_FAILED: 412,
  IDEMPOTENCY_KEY_REUSED: 422,
  IDEMPOTENCY_KEY_IN_USE: 409,
  RATE_LIMITED: 429,
  HEADERS_TOO_LARGE: 431,
  INTERNAL_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** Human description of each code, used by the OpenAPI document and docs/errors.md. */
export const ERROR_DESCRIPTIONS: Record<ErrorCode, string> = {
  UNAUTHORIZED: 'The API key is missing, malformed, unknown, revoked or expired.',
  INSUFFICIENT_SCOPE: 'The API key lacks the scope this operation needs; the message names it.',
  VALIDATION_FAILED: 'The body or query failed validation; `errors` lists every bad field.',
  INVALID_JSON: 'The body is not valid JSON.',
  MALFORMED_REQUEST: 'The request is not valid HTTP; the connection is closed.',
  UNSUPPORTED_MEDIA_TYPE: 'The body is not sent as uncompressed UTF-8 application/json.',
  PAYLOAD_TOO_LARGE: "The body exceeds the route's size limit (BODY_LIMIT_BYTES; batch routes: ten times that), named in the message in bytes. A declared Content-Length over it is refused before the body is read (and before the key is checked; `Expect: 100-continue` gets this instead of 100 Continue); the connection is closed. The rate-limit headers come only with a body refused while it was being read (sent chunked, without a Content-Length), the key checked by then; a refused Content-Length is answered without them, as a 401 is.",
  NOT_FOUND: 'No such resource in your organization.',
  ROUTE_NOT_FOUND: 'No such route.',
  METHOD_NOT_ALLOWED: 'The route exists but not with this method.',
  REQUEST_TIMEOUT: 'The request (headers, or headers and body) did not arrive in time; the connection is closed.',
  CONFLICT: 'The request conflicts with the current state of the resource.',
  LIMIT_EXCEEDED: 'The organization is at a documented limit (custom objects: MAX_OBJECTS_PER_ORG; webhook endpoints: MAX_WEBHOOKS_PER_ORG); the message names it.',
  EXTERNAL_ID_TAKEN: 'Another item of the same kind in your organization (records: of the same object), live or in the trash, already has this `externalId`. Update that item (upsertBy: externalId), or purge it first if it is in the trash.',
  CURSOR_EXPIRED: 'The change feed cursor is older than the retained events (EVENT_RETENTION_DAYS): events after it were deleted. Read the current records again and restart the feed without `after`.',
  PRECONDITION_FAILED: 'If-Match (or a batch item\'s ifMatch) names a version the resource no longer has (someone changed it since you read it): `data` holds the current resource (a batch item: its result; the resource\'s minimal view for a key that may write but not read it) and the ETag header its tag; merge and retry with that tag.',
  IDEMPOTENCY_KEY_REUSED: 'The Idempotency-Key was already used with a different request.',
  IDEMPOTENCY_KEY_IN_USE: 'A request with the same Idempotency-Key is still being processed; retry later.',
  RATE_LIMITED: 'Too many requests for this key; wait for the number of seconds in Retry-After.',
  HEADERS_TOO_LARGE: 'The request headers exceed the size limit; the connection is closed.',
  INTERNAL_ERROR: 'An unexpected error; the requestId helps support find it.',
  SERVICE_UNAVAILABLE: 'A dependency (the database, or Redis where the rate limit is shared) is unreachable, or the database is out of disk space, memory or connections; retry after Retry-After seconds.',
};

export interface FieldError {
  field: string;
  code: string;
  message: string;
}

/** The one error type of the service. Thrown anywhere, mapped to HTTP once (src/http/error-handler.ts). */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly errors: FieldError[] | undefined;
  readonly headers: Record<string, string> | undefined;
  /** A body the error carries beside the message: the current resource of a 412, under its usual key. */
  readonly data: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, opts?: { errors?: FieldError[]; headers?: Record<string, string>; data?: Record<string, unknown> }) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.errors = opts?.errors;
    this.headers = opts?.headers;
    this.data = opts?.data;
  }

  get status(): number {
    return ERROR_STATUS[this.code];
  }
}

/** Never names the id or slug asked for: a path value may be an e-mail or a key pasted by mistake. */
export const notFound = (what: string): AppError => new AppError('NOT_FOUND', `${what} not found`);

/** One or more field errors collected by a service, reported together. */
export function validationFailed(errors: FieldError[]): AppError {
  const message = errors.length === 1 ? `${errors[0]!.field}: ${errors[0]!.message}` : `${errors.length} fields are invalid`;
  return new AppError('VALIDATION_FAILED', message, { errors });
}
