import { describe, expect, it } from 'vitest';
import { MAX_BACKOFF_MS, isReplaySafe, parseRetryAfter, retryDelayMs, shouldRetry } from '../src/retry.js';

describe('retry policy', () => {
  it('treats GET, PUT, DELETE, PATCH and keyed POSTs as replay-safe, plain POSTs not', () => {
    expect(['GET', 'put', 'DELETE', 'PATCH'].map((m) => isReplaySafe(m, false))).toEqual([true, true, true, true]);
    expect(isReplaySafe('POST', false)).toBe(false);
    expect(isReplaySafe('POST', true)).toBe(true);
  });

  it('retries 429 and IDEMPOTENCY_KEY_IN_USE for any method, 5xx and network errors only when replay-safe', () => {
    const status = (s: number, code = 'X') => ({ kind: 'status' as const, status: s, code, retryAfterMs: null });
    expect(shouldRetry('POST', false, status(429))).toBe(true);
    expect(shouldRetry('POST', true, status(409, 'IDEMPOTENCY_KEY_IN_USE'))).toBe(true);
    expect(shouldRetry('POST', true, status(409, 'CONFLICT'))).toBe(false);
    expect(shouldRetry('POST', false, status(500))).toBe(false);
    expect(shouldRetry('POST', true, status(503))).toBe(true);
    expect(shouldRetry('GET', false, status(501))).toBe(false);
    expect(shouldRetry('GET', false, status(400))).toBe(false);
    expect(shouldRetry('POST', false, { kind: 'network' })).toBe(false);
    expect(shouldRetry('GET', false, { kind: 'network' })).toBe(true);
  });

  it('backs off exponentially between half and all of the step, capped', () => {
    expect(retryDelayMs(0, null, () => 0)).toBe(250);
    expect(retryDelayMs(0, null, () => 0.999)).toBe(499);
    expect(retryDelayMs(3, null, () => 0)).toBe(2000);
    expect(retryDelayMs(20, null, () => 0.999)).toBeLessThanOrEqual(MAX_BACKOFF_MS);
  });

  it('honours Retry-After (plus a little jitter) and refuses waits longer than a minute', () => {
    expect(retryDelayMs(0, 5000, () => 0)).toBe(5000);
    expect(retryDelayMs(0, 5000, () => 0.5)).toBeGreaterThan(5000);
    expect(retryDelayMs(0, 61_000, () => 0)).toBeNull();
  });

  it('parses Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-11-21T10:00:00Z');
    expect(parseRetryAfter('12', now)).toBe(12_000);
    expect(parseRetryAfter('Sat, 21 Nov 2026 10:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Sat, 21 Nov 2026 09:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(null, now)).toBeNull();
  });
});
