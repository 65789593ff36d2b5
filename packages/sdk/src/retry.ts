// When a failed request is sent again, and after how long.
//
// Retried for every method:
//  * 429 RATE_LIMITED — the server refuses before reading the body, so nothing happened; Retry-After is honoured.
//  * 409 IDEMPOTENCY_KEY_IN_USE — the first request with this key is still running; a later retry replays its answer.
// Retried only when sending the request twice cannot do the work twice ("replay-safe"):
//  * 5xx answers and network errors (the request may or may not have been processed).
//    GET/HEAD/PUT/DELETE are safe by definition. POST is safe only with an Idempotency-Key (every create
//    sends one). PATCH is safe in THIS API: every PATCH is an absolute merge-patch (fields are set, never
//    incremented or appended), so applying it twice leaves the same state, and the server records an event
//    only when something actually changed — a replay produces no second `*.updated` event.

export const BASE_DELAY_MS = 500;
export const MAX_BACKOFF_MS = 8_000;
/** A Retry-After longer than this is not waited for: the error is thrown so the caller can decide. */
export const MAX_RETRY_AFTER_MS = 60_000;

const REPLAY_SAFE = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'PATCH']);

export type Outcome =
  | { kind: 'status'; status: number; code: string; retryAfterMs: number | null }
  | { kind: 'network' };

export function isReplaySafe(method: string, hasIdempotencyKey: boolean): boolean {
  const m = method.toUpperCase();
  return REPLAY_SAFE.has(m) || (m === 'POST' && hasIdempotencyKey);
}

export function shouldRetry(method: string, hasIdempotencyKey: boolean, outcome: Outcome): boolean {
  if (outcome.kind === 'network') return isReplaySafe(method, hasIdempotencyKey);
  if (outcome.status === 429) return true;
  if (outcome.status === 409 && outcome.code === 'IDEMPOTENCY_KEY_IN_USE') return true;
  return outcome.status >= 500 && outcome.status !== 501 && isReplaySafe(method, hasIdempotencyKey);
}

/**
 * Milliseconds to wait before retry number `attempt` (0-based): Retry-After when given (plus a little
 * jitter so clients told the same instant don't all return at once), else exponential backoff with
 * jitter (between half and all of min(8 s, 0.5 s × 2^attempt)). null: don't retry (Retry-After too long).
 */
export function retryDelayMs(attempt: number, retryAfterMs: number | null, random: () => number = Math.random): number | null {
  if (retryAfterMs !== null) {
    if (retryAfterMs > MAX_RETRY_AFTER_MS) return null;
    return retryAfterMs + Math.floor(random() * BASE_DELAY_MS);
  }
  const backoff = Math.min(MAX_BACKOFF_MS, BASE_DELAY_MS * 2 ** attempt);
  return Math.floor(backoff / 2 + random() * (backoff / 2));
}

/** Retry-After as delta-seconds or an HTTP date (RFC 9110 §10.2.3), in milliseconds from `nowMs`. */
export function parseRetryAfter(value: string | null, nowMs: number): number | null {
  if (value === null || value.trim() === '') return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? null : Math.max(0, date - nowMs);
}

/** Resolves after `ms`, or rejects at once when the caller's signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
