// When a failed webhook delivery is tried again (contract §5).
//
// Pure functions: the dispatcher passes in the attempt number, the response's Retry-After and,
// in tests, a deterministic random source; it owns the clock and the outbox row.

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

/**
 * Nominal wait after the failure of attempt N (index N - 1). Nine waits, so attempt 10 is the last;
 * the nominal series adds up to ~3.15 days, matching "retries for ~3 days" in the contract and
 * giving a receiver that is down over a weekend night a fair chance to come back.
 */
export const RETRY_DELAYS_MS: readonly number[] = Object.freeze([
  5 * SECOND,
  5 * MINUTE,
  30 * MINUTE,
  2 * HOUR,
  5 * HOUR,
  10 * HOUR,
  14 * HOUR,
  20 * HOUR,
  24 * HOUR,
]);

/** The first attempt plus one per retry delay. */
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;

/**
 * ±20 % of the nominal delay. Without jitter every delivery that failed during the same outage
 * would come back at the same instant and knock the receiver over again (thundering herd); 20 %
 * is wide enough to spread a burst, narrow enough that "about 5 minutes" still means that.
 */
export const JITTER_RATIO = 0.2;

/**
 * No single wait exceeds 24 h, whether from jitter on the last step or from a receiver's
 * Retry-After. This keeps a whole series within ~3.6 days, so "failing every attempt for 3 days
 * disables the endpoint" stays true and a hostile Retry-After cannot park a delivery forever.
 */
export const MAX_DELAY_MS = 24 * HOUR;

export interface NextAttemptOptions {
  /** Uniform in [0, 1); Math.random by default, injected in tests. */
  random?: () => number;
  /** Milliseconds from a 429/503 Retry-After header (see parseRetryAfter), if any. */
  retryAfterMs?: number | null;
}

/**
 * How long to wait before the next attempt, or null when the attempt that just failed was the last.
 * @param attempt 1-based number of the attempt that just failed.
 */
export function nextAttemptDelay(attempt: number, opts: NextAttemptOptions = {}): number | null {
  if (!Number.isInteger(attempt) || attempt < 1) {
    throw new RangeError(`attempt must be a positive integer, got ${attempt}`);
  }
  const nominal = RETRY_DELAYS_MS[attempt - 1];
  // Retry-After never buys an extra attempt: the series length is fixed by the contract.
  if (nominal === undefined) return null;

  const random = opts.random ?? Math.random;
  const factor = 1 + (2 * random() - 1) * JITTER_RATIO;
  let delay = Math.round(nominal * factor);

  const retryAfter = opts.retryAfterMs;
  if (retryAfter != null && Number.isFinite(retryAfter) && retryAfter > 0) {
    // Honour the receiver's request, but never retry sooner than our own schedule says.
    delay = Math.max(delay, Math.ceil(retryAfter));
  }
  return Math.min(delay, MAX_DELAY_MS);
}

const DAY_NAMES = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const LONG_DAY_NAMES = '(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)';
const MONTHS = '(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const TIME = '\\d{2}:\\d{2}:\\d{2}';
// The three HTTP-date forms of RFC 9110 §5.6.7. Checked by shape first because Date.parse
// alone accepts almost anything ("1", "2024") and would turn garbage into a date.
const IMF_FIXDATE = new RegExp(`^${DAY_NAMES}, \\d{2} ${MONTHS} \\d{4} ${TIME} GMT$`);
const RFC850_DATE = new RegExp(`^${LONG_DAY_NAMES}, \\d{2}-${MONTHS}-\\d{2} ${TIME} GMT$`);
const ASCTIME_DATE = new RegExp(`^${DAY_NAMES} ${MONTHS} [ \\d]\\d ${TIME} \\d{4}$`);

/**
 * Milliseconds the receiver asked us to wait, from a Retry-After header: delta-seconds or an
 * HTTP-date (a date in the past means "now", i.e. 0). Null when absent or malformed, in which case
 * the caller simply follows the schedule.
 */
export function parseRetryAfter(value: string | undefined, now: Date): number | null {
  if (value === undefined) return null;
  const text = value.trim();
  if (text === '') return null;

  if (/^\d+$/.test(text)) {
    const seconds = Number(text);
    return Number.isSafeInteger(seconds) ? seconds * SECOND : null;
  }

  let when: number;
  if (IMF_FIXDATE.test(text) || RFC850_DATE.test(text)) {
    when = Date.parse(text);
  } else if (ASCTIME_DATE.test(text)) {
    // asctime carries no zone; HTTP defines it as GMT, while Date.parse would assume local time.
    when = Date.parse(`${text} GMT`);
  } else {
    return null;
  }
  if (Number.isNaN(when)) return null;
  return Math.max(0, when - now.getTime());
}
