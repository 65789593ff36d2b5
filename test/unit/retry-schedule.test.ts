import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  JITTER_RATIO,
  MAX_ATTEMPTS,
  MAX_DELAY_MS,
  RETRY_DELAYS_MS,
  nextAttemptDelay,
  parseRetryAfter,
} from '../../src/modules/webhooks/retry-schedule.js';

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

describe('RETRY_DELAYS_MS', () => {
  it('follows the contract: ~5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h, 24 h', () => {
    expect(RETRY_DELAYS_MS).toEqual([
      5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 14 * HOUR, 20 * HOUR, 24 * HOUR,
    ]);
    expect(MAX_ATTEMPTS).toBe(10);
  });

  it('adds up to about three days', () => {
    const total = RETRY_DELAYS_MS.reduce((a, b) => a + b, 0);
    expect(total / DAY).toBeGreaterThan(3);
    expect(total / DAY).toBeLessThan(3.2);
  });
});

describe('nextAttemptDelay', () => {
  const middle = () => 0.5; // factor exactly 1

  it('returns the nominal delay when the jitter draw is centred', () => {
    RETRY_DELAYS_MS.forEach((nominal, i) => {
      expect(nextAttemptDelay(i + 1, { random: middle })).toBe(nominal);
    });
  });

  it('spans -20 % .. +20 % at the extremes of the random draw', () => {
    expect(nextAttemptDelay(2, { random: () => 0 })).toBe(4 * MINUTE);
    expect(nextAttemptDelay(2, { random: () => 0.999999999 })).toBeCloseTo(6 * MINUTE, -1);
  });

  it('returns null after the tenth attempt fails (no attempt remains)', () => {
    expect(nextAttemptDelay(9, { random: middle })).toBe(24 * HOUR);
    expect(nextAttemptDelay(10, { random: middle })).toBeNull();
    expect(nextAttemptDelay(11, { random: middle })).toBeNull();
  });

  it('rejects attempt numbers that are not positive integers', () => {
    expect(() => nextAttemptDelay(0)).toThrow(RangeError);
    expect(() => nextAttemptDelay(1.5)).toThrow(RangeError);
    expect(() => nextAttemptDelay(Number.NaN)).toThrow(RangeError);
  });

  it('never exceeds 24 h, even when jitter pushes the last step up', () => {
    expect(nextAttemptDelay(9, { random: () => 0.99 })).toBe(MAX_DELAY_MS);
  });

  it('waits at least as long as Retry-After asks', () => {
    expect(nextAttemptDelay(1, { random: middle, retryAfterMs: 120 * SECOND })).toBe(120 * SECOND);
  });

  it('keeps its own longer delay when Retry-After is shorter', () => {
    expect(nextAttemptDelay(3, { random: middle, retryAfterMs: 10 * SECOND })).toBe(30 * MINUTE);
  });

  it('caps a huge Retry-After at 24 h', () => {
    expect(nextAttemptDelay(1, { random: middle, retryAfterMs: 30 * DAY })).toBe(24 * HOUR);
  });

  it('ignores null, negative and non-finite Retry-After values', () => {
    for (const retryAfterMs of [null, -5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(nextAttemptDelay(1, { random: middle, retryAfterMs })).toBe(5 * SECOND);
    }
  });

  it('does not grant an extra attempt because of Retry-After', () => {
    expect(nextAttemptDelay(10, { random: middle, retryAfterMs: 5 * SECOND })).toBeNull();
  });

  it('property: every delay stays in the jitter band (never above 24 h) and a full series lasts ~2.4-3.6 days', () => {
    const draw = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });
    fc.assert(
      fc.property(fc.array(draw, { minLength: 9, maxLength: 9 }), (draws) => {
        let total = 0;
        draws.forEach((r, i) => {
          const nominal = RETRY_DELAYS_MS[i]!;
          const delay = nextAttemptDelay(i + 1, { random: () => r });
          expect(delay).not.toBeNull();
          expect(delay!).toBeGreaterThanOrEqual(Math.floor(nominal * (1 - JITTER_RATIO)));
          expect(delay!).toBeLessThanOrEqual(Math.min(Math.ceil(nominal * (1 + JITTER_RATIO)), MAX_DELAY_MS));
          total += delay!;
        });
        expect(nextAttemptDelay(10, { random: () => draws[0]! })).toBeNull();
        expect(total / DAY).toBeGreaterThanOrEqual(2.4);
        expect(total / DAY).toBeLessThanOrEqual(3.6);
      }),
    );
  });
});

describe('parseRetryAfter', () => {
  const now = new Date('2025-03-01T12:00:00Z');

  it('reads delta-seconds', () => {
    expect(parseRetryAfter('120', now)).toBe(120_000);
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter(' 7 ', now)).toBe(7_000);
  });

  it('reads an IMF-fixdate HTTP-date relative to now', () => {
    expect(parseRetryAfter('Sat, 01 Mar 2025 12:05:00 GMT', now)).toBe(5 * MINUTE);
  });

  it('reads the obsolete RFC 850 and asctime forms (asctime as GMT)', () => {
    expect(parseRetryAfter('Saturday, 01-Mar-25 12:00:30 GMT', now)).toBe(30 * SECOND);
    expect(parseRetryAfter('Sat Mar  1 13:00:00 2025', now)).toBe(HOUR);
  });

  it('treats a date in the past as "retry now"', () => {
    expect(parseRetryAfter('Fri, 28 Feb 2025 12:00:00 GMT', now)).toBe(0);
  });

  it('returns null for absent or malformed values', () => {
    for (const value of [undefined, '', '   ', '-1', '1.5', 'soon', 'March 2025', '2025-03-01T12:05:00Z', '0x10', 'Sat, 01 Mar 2025 12:05:00 PST']) {
      expect(parseRetryAfter(value, now)).toBeNull();
    }
  });

  it('property: any non-negative integer of seconds round-trips', () => {
    fc.assert(
      fc.property(fc.nat({ max: 10_000_000 }), (seconds) => {
        expect(parseRetryAfter(String(seconds), now)).toBe(seconds * 1000);
      }),
    );
  });

  it('property: arbitrary strings never throw and never yield a negative delay', () => {
    fc.assert(
      fc.property(fc.string(), (value) => {
        const result = parseRetryAfter(value, now);
        expect(result === null || result >= 0).toBe(true);
      }),
    );
  });
});
