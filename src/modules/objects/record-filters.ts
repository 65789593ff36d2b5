import type { BlindIndex } from '../../crypto/blind-index.js';
import { validationFailed, type FieldError } from '../../errors.js';
import { isEmail, normalizeEmail, normalizePhone } from '../../lib/contact.js';
import { parseDateOnly } from '../../lib/dates.js';
import type { Definition, Field } from './definition.js';
import { ID_PATTERN } from '../../lib/ids.js';
import { isContactField, optionOf, parseInstant } from './field-values.js';
import { isFilterable, TEXT_PREFIX } from './record-values.js';

/**
 * `filter[<field>]=v` and `filter[<field>][gte|lte|gt|lt]=v` on records (contract §8), checked against the
 * object's definition: equality on select, boolean, text, email, phone (and number, date, datetime), ranges
 * on number, date and datetime. On a multi_select, `=option` finds the records holding that option; on a
 * relation, `=id` the records pointing at that item (a reverse lookup; the item need not be live, so links to
 * a trashed or purged item can still be found). Every bad parameter is reported, named as sent. A value is the
 * query string's text; the MCP tools' arguments are JSON, so there a number field also takes a JSON number and a
 * boolean field a JSON boolean, read as their text (`3` as `"3"`, `true` as `"true"`).
 */

export const RANGE_OPERATORS = ['gte', 'lte', 'gt', 'lt'] as const;
export type FilterOperator = 'eq' | (typeof RANGE_OPERATORS)[number];
const RANGED = new Set(['number', 'date', 'datetime']);
/** Fields that take ranges (and sort a list): number, date, datetime. */
export const isRanged = (f: Field): boolean => RANGED.has(f.type);
export const FILTER_PARAM = /^filter\[([^\]]+)\](?:\[([a-z]+)\])?$/;

export interface FieldCondition {
  operator: FilterOperator;
  /** The value as record_values holds it: a number, a text, or a blind index. */
  value: number | string;
  /** Text equality compares the indexed prefix; the whole value is checked against the record's data too. */
  fullText?: string;
}

export interface FieldFilter {
  field: Field;
  column: 'num_value' | 'text_value';
  conditions: FieldCondition[];
}

/**
 * Whether a filter names few items: equality on a relation (a reverse lookup) or on a blind-indexed e-mail or
 * phone. The list then reads those items and sorts them (db/list-page.ts listScope's `byReference`) instead of
 * walking its sort index and testing every item in turn: one address among 1,000,000 leads took 138 ms p50
 * that way (bench/custom-fields.ts).
 */
export const namesFewItems = (f: FieldFilter): boolean => (f.field.type === 'relation' || isContactField(f.field)) && f.conditions.some((c) => c.operator === 'eq');

const ID = new RegExp(ID_PATTERN);
const fail = (field: string, code: string, message: string): FieldError => ({ field, code, message });

function parseValue(field: Field, raw: string, blind: { blindIndex: BlindIndex; organizationId: string }): number | string | null {
  switch (field.type) {
    case 'number': {
      const n = raw.trim() === '' ? NaN : Number(raw);
      return Number.isFinite(n) ? n : null;
    }
    case 'boolean':
      return raw === 'true' ? 1 : raw === 'false' ? 0 : null;
    case 'date': {
      const d = parseDateOnly(raw);
      return d.ok ? d.value : null;
    }
    case 'datetime':
      return parseInstant(raw);
    case 'select':
    case 'multi_select':
      return optionOf(field, raw) ?? null;
    case 'relation':
      return ID.test(raw) ? raw : null;
    case 'email':
      return isEmail(raw) ? blind.blindIndex.compute('email', blind.organizationId, normalizeEmail(raw)) : null;
    case 'phone': {
      const phone = normalizePhone(raw);
      return phone.ok ? blind.blindIndex.compute('phone', blind.organizationId, phone.e164) : null;
    }
    default:
      return raw.slice(0, TEXT_PREFIX);
  }
}

const EXPECTED: Record<string, string> = {
  number: 'a number',
  boolean: 'true or false',
  date: 'a date (YYYY-MM-DD)',
  datetime: 'an ISO 8601 timestamp with Z or an offset',
  select: 'one of the field options',
  multi_select: 'one of the field options',
  relation: 'an id (24 lowercase hex characters)',
  email: 'an e-mail address',
  phone: 'a phone number with its country code',
};

/** A filter's value as the query string's text, or null when its JSON type is not one the field's type gives meaning to. */
function queryText(field: Field, raw: unknown): string | null {
  if (typeof raw === 'string') return raw;
  if (typeof raw === 'number' && field.type === 'number' && Number.isFinite(raw)) return String(raw);
  if (typeof raw === 'boolean' && field.type === 'boolean') return String(raw);
  return null;
}

const JSON_TYPES: Record<string, string> = { number: 'a number (or its text)', boolean: 'true or false (or their text)' };

/** The `filter[...]` parameters of a query, checked and grouped by field. */
export function recordFilters(definition: Definition, query: Record<string, unknown>, blind: { blindIndex: BlindIndex; organizationId: string }): FieldFilter[] {
  const errors: FieldError[] = [];
  const byField = new Map<string, FieldFilter>();
  for (const [param, raw] of Object.entries(query)) {
    const m = FILTER_PARAM.exec(param);
    if (!m) continue;
    const field = definition.fields.find((f) => f.key === m[1]);
    if (!field) { errors.push(fail(param, 'unknown_field', 'is not a field of this object')); continue; }
    if (!isFilterable(field)) { errors.push(fail(param, 'not_filterable', `${field.type} fields cannot be filtered`)); continue; }
    // Equality is `filter[field]=v`; a bracketed operator is one of the ranges (`[eq]` too is unknown).
    if (m[2] !== undefined && !(RANGE_OPERATORS as readonly string[]).includes(m[2])) { errors.push(fail(param, 'unknown_operator', `must be one of: ${RANGE_OPERATORS.join(', ')}`)); continue; }
    const operator = (m[2] ?? 'eq') as FilterOperator;
    if (operator !== 'eq' && !RANGED.has(field.type)) { errors.push(fail(param, 'invalid_operator', `${field.type} fields take equality only`)); continue; }
    const text = queryText(field, raw);
    if (text === null) { errors.push(fail(param, 'invalid_type', `must be ${JSON_TYPES[field.type] ?? `a string, ${EXPECTED[field.type] ?? 'the text to match'}`}: ${field.key} is a ${field.type} field`)); continue; }
    const value = parseValue(field, text, blind);
    if (value === null) { errors.push(fail(param, 'invalid_value', `must be ${EXPECTED[field.type] ?? 'a value of the field'}`)); continue; }
    const column = field.type === 'number' || field.type === 'boolean' ? 'num_value' : 'text_value';
    const entry = byField.get(field.key) ?? { field, column, conditions: [] };
    entry.conditions.push({ operator, value, ...(field.type === 'text' ? { fullText: text } : {}) });
    byField.set(field.key, entry);
  }
  if (errors.length) throw validationFailed(errors);
  return [...byField.values()];
}

/** The sort of a records list: createdAt, updatedAt, or a date, datetime or number field (`-` descending). */
export type RecordSort = { kind: 'column'; sort: string } | { kind: 'field'; sort: string; field: Field; descending: boolean };

export function recordSort(definition: Definition, sort: string): RecordSort {
  const descending = sort.startsWith('-');
  const key = descending ? sort.slice(1) : sort;
  if (key === 'createdAt' || key === 'updatedAt') return { kind: 'column', sort };
  const field = definition.fields.find((f) => f.key === key);
  if (field && RANGED.has(field.type)) return { kind: 'field', sort, field, descending };
  const allowed = ['createdAt', 'updatedAt', ...definition.fields.filter((f) => RANGED.has(f.type)).map((f) => f.key)];
  throw validationFailed([fail('sort', 'invalid_value', `must be one of: ${allowed.join(', ')} (with - for descending)`)]);
}
