import { parsePhoneNumberFromString } from 'libphonenumber-js/max';

/** Lower-cased and trimmed: the form stored and blind-indexed, so lookups match whatever case was sent. */
export function normalizeEmail(input: string): string {
  return input.trim().toLowerCase();
}

/** Deliberately simple shape check (one @, a dot in the domain, no spaces); RFC 5322 corner cases are refused. */
const EMAIL_RE = /^[^\s@"(),:;<>[\\\]]+@[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+$/i;

export function isEmail(input: string): boolean {
  const value = input.trim();
  return value.length <= 254 && EMAIL_RE.test(value);
}

export type PhoneResult = { ok: true; e164: string } | { ok: false; message: string };

/**
 * International format only (contract: a number without its country code is refused, since exact matching
 * across leads depends on one canonical form). Parsed and validated by libphonenumber, returned as E.164.
 */
export function normalizePhone(input: string): PhoneResult {
  let result = recent.get(input);
  if (result === undefined) {
    result = parsePhone(input);
    if (recent.size >= RECENT_MAX) recent.clear();
    recent.set(input, result);
  }
  return result;
}

/** Validation and normalization both parse the same input; a small cache makes the second parse free. */
const recent = new Map<string, PhoneResult>();
const RECENT_MAX = 4096;

function parsePhone(input: string): PhoneResult {
  const value = input.trim();
  if (!value.startsWith('+') && !value.startsWith('00')) {
    return { ok: false, message: 'must include the country code in international format, e.g. +14155550100' };
  }
  const parsed = parsePhoneNumberFromString(value.startsWith('00') ? `+${value.slice(2)}` : value);
  if (!parsed || !parsed.isValid()) {
    return { ok: false, message: 'is not a valid phone number; use international format with the country code, e.g. +14155550100' };
  }
  return { ok: true, e164: parsed.number };
}

/** The digits of an E.164 number without its country code (+14155550100 → 4155550100), as it is often written. */
export function nationalDigits(e164: string): string {
  return parsePhoneNumberFromString(e164)?.nationalNumber ?? e164.slice(1);
}

/** True when `q` looks like a phone number a user meant to search by exactly (starts with + and parses). */
export function phoneQuery(q: string): string | null {
  if (!/^\s*(\+|00)[\d\s().-]{6,}$/.test(q)) return null;
  const result = normalizePhone(q);
  return result.ok ? result.e164 : null;
}
