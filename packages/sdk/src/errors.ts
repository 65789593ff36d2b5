import type { ErrorCode, FieldError } from './types.js';

/** An error answer of the API: the error envelope, plus the HTTP status and the request id for support. */
export class CrmApiError extends Error {
  override readonly name = 'CrmApiError';
  readonly status: number;
  /** Stable SCREAMING_SNAKE code (see docs/errors.md); `HTTP_ERROR` when the answer was not the API's envelope (e.g. a proxy page). */
  readonly code: ErrorCode | 'HTTP_ERROR';
  /** One entry per bad field on VALIDATION_FAILED; empty otherwise. */
  readonly errors: FieldError[];
  readonly requestId: string | null;
  /** Seconds from Retry-After, when the server sent it (429, 503). */
  readonly retryAfter: number | null;
  /** 412 PRECONDITION_FAILED: the current resource under its usual key (`data.lead`), tagged with its ETag. */
  readonly data: Record<string, unknown> | null;

  constructor(init: { status: number; code: ErrorCode | 'HTTP_ERROR'; message: string; errors?: FieldError[]; requestId: string | null; retryAfter?: number | null; data?: Record<string, unknown> | null }) {
    super(init.message);
    this.status = init.status;
    this.code = init.code;
    this.errors = init.errors ?? [];
    this.requestId = init.requestId;
    this.retryAfter = init.retryAfter ?? null;
    this.data = init.data ?? null;
  }
}

/** The request never got an HTTP answer (DNS, refused or reset connection, timeout), after any retries. */
export class CrmConnectionError extends Error {
  override readonly name = 'CrmConnectionError';

  constructor(message: string, options: { cause: unknown }) {
    super(message, options);
  }
}
