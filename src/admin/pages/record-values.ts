import { zonedDateTimeToUtc } from '../../lib/dates.js';
import type { Field } from '../../modules/objects/definition.js';
import { own } from '../../lib/own.js';
import { list, text, type FormBody } from '../forms.js';

/*
 * A record's values as form text and back. Inputs are text (the browser's date and datetime-local pickers
 * included), a multi_select's checked options as a JSON array; what can be converted is converted to the API's types, anything else is passed through as
 * typed so the service refuses it with its own message.
 */

/**
 * A multi_select's form text: its options as a JSON array in the definition's order ('' for none). An option may
 * hold any character (`;` and `,` included), so no separator could join them without breaking some; the fixed
 * order makes an unchanged choice the same text before and after the edit.
 */
export function optionsText(field: Field, options: readonly string[]): string {
  const defined = field.options ?? [];
  const rank = (option: string) => (defined.includes(option) ? defined.indexOf(option) : defined.length);
  return options.length ? JSON.stringify([...options].sort((x, y) => rank(x) - rank(y))) : '';
}

/** The options of a multi_select's form text (as made by `optionsText`). */
export const textOptions = (text: string): string[] => (text === '' ? [] : (JSON.parse(text) as string[]));

const partsFormatters = new Map<string, Intl.DateTimeFormat>();

/** A UTC instant as the value of a datetime-local input in the organization's zone ("2026-11-21T10:00"). */
export function toLocalInput(iso: string, timeZone: string): string {
  let f = partsFormatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23' });
    partsFormatters.set(timeZone, f);
  }
  const p = Object.fromEntries(f.formatToParts(new Date(iso)).map((x) => [x.type, x.value]));
  return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}${p.second === '00' ? '' : `:${p.second}`}`;
}

const LOCAL = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/;

/** A datetime-local value, read in the organization's zone, as a UTC instant; undefined when it isn't one. */
export function fromLocalInput(value: string, timeZone: string): string | undefined {
  const m = LOCAL.exec(value);
  if (!m) return undefined;
  try {
    const at = zonedDateTimeToUtc(m[1]!, Number(m[2]), Number(m[3]), timeZone);
    return new Date(at.getTime() + Number(m[4] ?? 0) * 1000).toISOString();
  } catch {
    return undefined;
  }
}

/** The form text of one stored value. */
export function formValue(field: Field, value: unknown, timeZone: string): string {
  if (value === null || value === undefined) return '';
  if (field.type === 'boolean') return value ? 'true' : 'false';
  if (field.type === 'date') return String(value).slice(0, 10);
  if (field.type === 'datetime') return toLocalInput(String(value), timeZone);
  if (field.type === 'multi_select' && Array.isArray(value)) return optionsText(field, value.map(String));
  return String(value);
}

/** The form text of an item's field values (a record, or a lead's custom fields). */
export function formValues(fields: readonly Field[], record: Readonly<Record<string, unknown>>, timeZone: string): Record<string, string> {
  return Object.fromEntries(fields.map((f) => [f.key, formValue(f, own(record, f.key), timeZone)]));
}

const NUMBER = /^-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** One input's text as the API value ('' never reaches here: blank means "not given" or "clear"). */
export function apiValue(field: Field, raw: string, timeZone: string): unknown {
  const value = field.type === 'text' || field.type === 'long_text' ? raw : raw.trim();
  switch (field.type) {
    case 'number':
      return NUMBER.test(value) ? Number(value) : value;
    case 'boolean':
      return value === 'true' ? true : value === 'false' ? false : value;
    case 'datetime':
      return fromLocalInput(value, timeZone) ?? value;
    case 'multi_select':
      return textOptions(value);
    default:
      return value;
  }
}

/**
 * The API body of a submitted form. Creating: blank inputs are left out. Editing: only inputs whose text
 * changed are sent (a blank one clears the field), so untouched values — a datetime's milliseconds — stay exact.
 */
export function recordBody(fields: readonly Field[], submitted: Record<string, string>, opts: { timeZone: string; before?: Record<string, string> }): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const field of fields) {
    const raw = own(submitted, field.key) ?? '';
    if (opts.before && own(opts.before, field.key) === raw) continue;
    if (raw.trim() === '') {
      if (opts.before) body[field.key] = null;
      continue;
    }
    body[field.key] = apiValue(field, raw, opts.timeZone);
  }
  return body;
}

/** A field's submitted text: a multi_select's checked boxes (each a value of its own in the body) as `optionsText`, any other input as sent. */
export const submittedText = (body: FormBody, field: Field): string => (field.type === 'multi_select' ? optionsText(field, list(body, field.key)) : text(body, field.key));
