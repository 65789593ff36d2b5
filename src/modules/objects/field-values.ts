import { isEmail, normalizeEmail, normalizePhone } from '../../lib/contact.js';
import { formatDateOnly, parseDateOnly } from '../../lib/dates.js';
import { ID_PATTERN } from '../../lib/ids.js';
import type { Field } from './definition.js';

/** A value as stored in a record's data (e-mails and phones still in clear here; the service encrypts them); a multi_select's options as an array. */
export type StoredValue = string | number | boolean | string[];
export type ParseResult = { ok: true; value: StoredValue } | { ok: false; code: string; message: string };

export const MAX_TEXT = 1_000;
export const MAX_LONG_TEXT = 65_535;
const MAX_URL = 2_048;

const fail = (code: string, message: string): ParseResult => ({ ok: false, code, message });
const typeName: Record<Field['type'], string> = {
  text: 'a string',
  long_text: 'a string',
  number: 'a number',
  boolean: 'true or false',
  date: 'a date string (YYYY-MM-DD)',
  datetime: 'an ISO 8601 timestamp string',
  select: 'a string',
  multi_select: 'an array of strings',
  email: 'a string',
  phone: 'a string',
  url: 'a string',
  relation: 'an id string (24 lowercase hex characters)',
};
const ID = new RegExp(ID_PATTERN);

/**
 * The options of `values` in the order the field lists them now: the order a multi_select is written in, and
 * read in (its options may have been reordered since it was written). One pass over the options, no sort.
 */
const inOptionOrder = (options: readonly string[], values: readonly string[]): string[] => options.filter((o) => values.includes(o));

/**
 * The option of a (multi) select that `value` names, as the definition spells it: compared in Unicode's NFC, so
 * "Café" typed with a combining accent (as macOS and some keyboards send it) is the option "Café". Undefined when
 * it names none.
 */
export function optionOf(field: Pick<Field, 'options'>, value: string): string | undefined {
  const options = field.options ?? [];
  if (options.includes(value)) return value;
  const nfc = value.normalize('NFC');
  return options.find((o) => o.normalize('NFC') === nfc);
}

/**
 * A multi_select value: distinct options of the field, in the order the definition lists them. An empty array is
 * the caller's to treat as "no value".
 */
export function parseOptions(field: Field, value: unknown): ParseResult {
  if (!Array.isArray(value) || !value.every((v): v is string => typeof v === 'string')) return fail('invalid_type', 'must be an array of strings');
  const options = field.options ?? [];
  const named = value.map((v) => optionOf(field, v));
  if (!named.every((o) => o !== undefined)) return fail('invalid_value', `must hold only: ${options.join(', ')}`);
  if (new Set(named).size !== named.length) return fail('duplicate', 'must not repeat an option');
  return { ok: true, value: inOptionOrder(options, named) };
}

// Calendar date, time (seconds and fraction optional), then Z or an offset (±hh:mm, ±hhmm or ±hh).
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d+))?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)$/;

/**
 * An ISO 8601 instant that names its offset → the UTC form `YYYY-MM-DDTHH:mm:ss.sssZ` (fractions beyond the
 * millisecond are cut). Without an offset the instant is unknowable, so it is refused.
 */
export function parseInstant(input: string): string | null {
  const m = input.length <= 64 ? INSTANT.exec(input) : null;
  if (!m) return null;
  const [year, month, day, hour, minute, second] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i] ?? 0)) as [number, number, number, number, number, number];
  const ms = Number((m[7] ?? '').padEnd(3, '0').slice(0, 3));
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return null;
  const offsetMinutes = m[8] ? 0 : (m[9] === '-' ? -1 : 1) * (Number(m[10]) * 60 + Number(m[11] ?? 0));
  if (Number(m[10] ?? 0) > 23 || Number(m[11] ?? 0) > 59) return null;
  const local = new Date(0);
  local.setUTCFullYear(year, month - 1, day);
  if (local.getUTCMonth() !== month - 1 || local.getUTCDate() !== day) return null;
  local.setUTCHours(hour, minute, second, ms);
  const utc = new Date(local.getTime() - offsetMinutes * 60_000);
  const y = utc.getUTCFullYear();
  return y >= 1 && y <= 9999 ? utc.toISOString() : null;
}

function parseUrl(value: string): boolean {
  if (value.length > MAX_URL) return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/**
 * Past ±2^53 a JSON number no longer holds every integer: 9007199254740993 arrives as …992. Such a value is
 * refused rather than stored other than sent (a deal amount takes a decimal string for that; a number field has none).
 */
function parsedNumber(value: number): ParseResult {
  if (Math.abs(value) > Number.MAX_SAFE_INTEGER) return fail('too_precise', `must be between -${Number.MAX_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER}: beyond, JSON numbers lose whole units`);
  return { ok: true, value };
}

/**
 * Checks one incoming value against its field and returns its stored form: dates as 'YYYY-MM-DD' (contract
 * rounding rules), datetimes in UTC, e-mails lower-cased, phones E.164. Never echoes the value in a message.
 */
export function parseFieldValue(field: Field, value: unknown): ParseResult {
  const wrongType = fail('invalid_type', `must be ${typeName[field.type]}`);
  if (field.type === 'number') return typeof value === 'number' && Number.isFinite(value) ? parsedNumber(value) : wrongType;
  if (field.type === 'boolean') return typeof value === 'boolean' ? { ok: true, value } : wrongType;
  if (field.type === 'multi_select') return parseOptions(field, value);
  if (typeof value !== 'string') return wrongType;
  switch (field.type) {
    case 'text':
    case 'long_text': {
      const max = field.type === 'text' ? MAX_TEXT : MAX_LONG_TEXT;
      if (value.length > max) return fail('too_long', `must be at most ${max} characters`);
      if (field.required && value.trim() === '') return fail('required', 'is required and must not be blank');
      return { ok: true, value };
    }
    case 'date': {
      const parsed = parseDateOnly(value);
      return parsed.ok ? { ok: true, value: parsed.value } : fail('invalid_date', parsed.reason);
    }
    case 'datetime': {
      const instant = parseInstant(value);
      return instant ? { ok: true, value: instant } : fail('invalid_format', 'must be an ISO 8601 timestamp with Z or an offset, e.g. 2026-11-21T10:00:00+01:00');
    }
    case 'select': {
      const option = optionOf(field, value);
      return option !== undefined ? { ok: true, value: option } : fail('invalid_value', `must be one of: ${(field.options ?? []).join(', ')}`);
    }
    case 'email':
      return isEmail(value) ? { ok: true, value: normalizeEmail(value) } : fail('invalid_format', 'must be a valid e-mail address');
    case 'phone': {
      const phone = normalizePhone(value);
      return phone.ok ? { ok: true, value: phone.e164 } : fail('invalid_format', phone.message);
    }
    case 'url':
      return parseUrl(value) ? { ok: true, value } : fail('invalid_format', 'must be an absolute http(s) URL');
    case 'relation':
      return ID.test(value) ? { ok: true, value } : fail('invalid_format', `must be the id of ${targetName(field.target)}`);
  }
}

/** How messages name a relation's target: "a lead", or "a record of projects". */
export function targetName(target: string | undefined): string {
  const builtIn: Record<string, string> = { leads: 'a lead', accounts: 'an account', deals: 'a deal' };
  return builtIn[target ?? ''] ?? `a record of ${target ?? 'the target object'}`;
}

/**
 * The API form of a stored value: date-only fields read back as midnight UTC (contract §4), a multi_select in
 * its field's current option order. Every read, list, event and export goes through it, and a write compares
 * the forms it gives before and after: the same set of options in any order is the same value.
 */
export function presentFieldValue(field: Field, stored: StoredValue): StoredValue {
  if (field.type === 'date') return formatDateOnly(String(stored));
  return field.type === 'multi_select' && Array.isArray(stored) ? inOptionOrder(field.options ?? [], stored) : stored;
}

export const isContactField = (field: Field): boolean => field.type === 'email' || field.type === 'phone';
export const isSearchableField = (field: Field): boolean => field.type === 'text' || field.type === 'long_text';
