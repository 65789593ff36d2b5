import { DateTime, IANAZone } from 'luxon';

/** A calendar day 'YYYY-MM-DD'. */
export type DateOnly = string;
export type DateParseResult = { ok: true; value: DateOnly } | { ok: false; reason: string };

const MIN_YEAR = 1;
const MAX_YEAR = 9999;
const MINUTES_PER_DAY = 24 * 60;
const DAY_MS = MINUTES_PER_DAY * 60_000;
// Long enough for any legitimate timestamp; stops pathological inputs before the regexes run.
const MAX_INPUT_LENGTH = 64;

const FORM_REASON = 'must be a date in the form YYYY-MM-DD (or an ISO-8601 timestamp with Z or a ±hh:mm offset)';
const DATE_REASON = 'is not a real calendar date';
const TIME_REASON = 'is not a real time of day';
const YEAR_REASON = 'must fall in the years 0001-9999';

// ASCII digits only (no /u flag, so \d never matches other scripts' digits). A timestamp must carry
// Z or ±hh:mm: without one its UTC instant, and therefore its nearest day, is unknowable.
const DAY_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIMESTAMP = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:Z|([+-])(\d{2}):(\d{2}))$/;
// IANA names are letters, digits, '_', '+', '-' in '/'-separated parts (e.g. 'Etc/GMT+5'). Newer
// runtimes also accept offsets such as '+02:00' as Intl time zones; those are not zone names.
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/;

interface Day {
  year: number;
  month: number;
  day: number;
}

function isRealDay({ year, month, day }: Day): boolean {
  if (year < MIN_YEAR || year > MAX_YEAR || month < 1 || month > 12 || day < 1) return false;
  return day <= (DateTime.utc(year, month, 1).daysInMonth ?? 0);
}

/** Formats by hand because luxon writes years past 9999 as '+010000'; callers range-check first. */
function format({ year, month, day }: Day): DateOnly {
  const pad = (n: number, width: number): string => String(n).padStart(width, '0');
  return `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}`;
}

function splitDay(day: unknown): Day | null {
  if (typeof day !== 'string') return null;
  const m = DAY_ONLY.exec(day);
  if (!m) return null;
  const parts = { year: Number(m[1]), month: Number(m[2]), day: Number(m[3]) };
  return isRealDay(parts) ? parts : null;
}

function requireDay(day: DateOnly): Day {
  const parts = splitDay(day);
  if (!parts) throw new RangeError(`${JSON.stringify(day)} is not a valid day (YYYY-MM-DD)`);
  return parts;
}

/** Shifts by whole days, or null when the result leaves the supported years. */
function shiftDays(start: Day, n: number): DateOnly | null {
  const shifted = DateTime.utc(start.year, start.month, start.day).plus({ days: n });
  const result = { year: shifted.year, month: shifted.month, day: shifted.day };
  return shifted.isValid && result.year >= MIN_YEAR && result.year <= MAX_YEAR ? format(result) : null;
}

/**
 * Contract §4: 'YYYY-MM-DD' is kept as that day; a timestamp with Z or ±hh:mm is moved to UTC and rounded
 * to the nearest UTC day (before 12:00:00.000 keeps the day, from 12:00 on is the next day). Anything else,
 * impossible dates and years outside 0001-9999 come back as ok:false with a reason for the API error.
 */
export function parseDateOnly(input: unknown): DateParseResult {
  if (typeof input !== 'string' || input.length > MAX_INPUT_LENGTH) return { ok: false, reason: FORM_REASON };
  const dayMatch = DAY_ONLY.exec(input);
  const m = dayMatch ?? TIMESTAMP.exec(input);
  if (!m) return { ok: false, reason: FORM_REASON };

  const local = { year: Number(m[1]), month: Number(m[2]), day: Number(m[3]) };
  if (local.year < MIN_YEAR) return { ok: false, reason: YEAR_REASON };
  if (!isRealDay(local)) return { ok: false, reason: DATE_REASON };
  if (dayMatch) return { ok: true, value: format(local) };

  const [hour, minute, second] = [Number(m[4]), Number(m[5]), Number(m[6] ?? 0)];
  // No leap second (:60) and no ISO '24:00' end-of-day: neither names an ordinary instant here.
  if (hour > 23 || minute > 59 || second > 59) return { ok: false, reason: TIME_REASON };
  const [offsetHours, offsetMinutes] = [Number(m[8] ?? 0), Number(m[9] ?? 0)];
  if (offsetHours > 23 || offsetMinutes > 59) return { ok: false, reason: 'has an invalid UTC offset' };
  const offset = (m[7] === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes);

  // Offsets are whole minutes, so the UTC time of day is >= 12:00:00.000 exactly when its
  // hour:minute is >= 12:00; seconds and any fraction digits can never tip it. Integer math
  // also means no millisecond rounding of '11:59:59.9999'.
  const utcMinutes = hour * 60 + minute - offset;
  const dayShift = Math.floor(utcMinutes / MINUTES_PER_DAY);
  const utcTimeOfDay = utcMinutes - dayShift * MINUTES_PER_DAY;
  const roundUp = utcTimeOfDay >= 12 * 60 ? 1 : 0;
  // One combined shift, so '0001-01-01T00:00+01:00' (0000-12-31T23:00Z -> 0001-01-01) stays in range.
  const value = shiftDays(local, dayShift + roundUp);
  return value === null ? { ok: false, reason: YEAR_REASON } : { ok: true, value };
}

/** 'YYYY-MM-DD' -> 'YYYY-MM-DDT00:00:00.000Z' (the API's output form). Throws RangeError on a non-day. */
export function formatDateOnly(day: DateOnly): string {
  return `${format(requireDay(day))}T00:00:00.000Z`;
}

/** True for IANA zone names the runtime knows ('Europe/Paris', 'UTC', aliases); false for '', 'Mars/Base', offsets. */
export function isValidTimeZone(timeZone: string): boolean {
  return typeof timeZone === 'string' && ZONE_NAME.test(timeZone) && IANAZone.isValidZone(timeZone);
}

/** All IANA zone names the runtime knows (Intl.supportedValuesOf('timeZone') plus 'UTC'), sorted. */
export function listTimeZones(): string[] {
  // V8 leaves 'UTC' out of supportedValuesOf; it is what most organizations start with.
  return [...new Set([...Intl.supportedValuesOf('timeZone'), 'UTC'])].sort();
}

function requireZone(timeZone: string): IANAZone {
  if (!isValidTimeZone(timeZone)) throw new RangeError(`${JSON.stringify(timeZone)} is not an IANA time zone`);
  return IANAZone.create(timeZone);
}

/** The calendar day it is at `instant` in IANA zone `timeZone`. Throws RangeError on a bad zone or Date. */
export function localDate(instant: Date, timeZone: string): DateOnly {
  const zone = requireZone(timeZone);
  if (!(instant instanceof Date) || Number.isNaN(instant.getTime())) throw new RangeError('instant is not a valid Date');
  const local = DateTime.fromJSDate(instant, { zone });
  const parts = { year: local.year, month: local.month, day: local.day };
  if (parts.year < MIN_YEAR || parts.year > MAX_YEAR) throw new RangeError(`local date year ${parts.year} is out of range`);
  return format(parts);
}

/**
 * The UTC instant of `hour:minute` local time on `day` in `timeZone`. In a DST gap the first valid instant
 * after the gap (the transition); in an overlap the earlier instant. Throws RangeError on bad arguments.
 */
export function zonedDateTimeToUtc(day: DateOnly, hour: number, minute: number, timeZone: string): Date {
  const parts = requireDay(day);
  const zone = requireZone(timeZone);
  if (!Number.isInteger(hour) || hour < 0 || hour > 23 || !Number.isInteger(minute) || minute < 0 || minute > 59) {
    throw new RangeError(`${hour}:${minute} is not a time of day`);
  }
  // luxon's DateTime.fromObject resolves an ambiguous local time with the offset in force *now*,
  // so overlaps would depend on the day the code runs. Resolve explicitly instead, reading offsets
  // from luxon's zone data: the wall-clock time read as if it were UTC, minus each offset in force
  // a day either side (a zone changes offset at most once in that window).
  const wall = DateTime.utc(parts.year, parts.month, parts.day, hour, minute).toMillis();
  const offsetMs = (t: number): number => zone.offset(t) * 60_000;
  const offsetBefore = offsetMs(wall - DAY_MS);
  const offsetAfter = offsetMs(wall + DAY_MS);
  const candidates = [wall - offsetBefore, wall - offsetAfter].filter((t) => t + offsetMs(t) === wall);
  // Two candidates: an overlap (clocks went back); the contract wants the earlier instant.
  if (candidates.length > 0) return new Date(Math.min(...candidates));

  // No candidate: a gap (clocks went forward, offsetAfter > offsetBefore). The first valid instant
  // after it is the transition itself, which lies between these two; find it by bisection
  // (transitions fall on whole seconds, so millisecond precision is exact).
  let lo = wall - offsetAfter; // before the transition
  let hi = wall - offsetBefore; // after it
  if (hi <= lo) throw new RangeError(`cannot resolve ${day} ${hour}:${minute} in ${timeZone}`);
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (offsetMs(mid) === offsetAfter) hi = mid;
    else lo = mid;
  }
  return new Date(hi);
}

/** day + n days (n a whole number, may be negative). Throws RangeError past the years 0001-9999. */
export function addDays(day: DateOnly, n: number): DateOnly {
  const parts = requireDay(day);
  if (!Number.isSafeInteger(n)) throw new RangeError(`${n} is not a whole number of days`);
  const result = shiftDays(parts, n);
  if (result === null) throw new RangeError(`${day} + ${n} days is outside the years 0001-9999`);
  return result;
}
