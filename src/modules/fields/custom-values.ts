import type { BlindIndex } from '../../crypto/blind-index.js';
import type { FieldCipher } from '../../crypto/field-cipher.js';
import { validationFailed, type FieldError } from '../../errors.js';
import { own } from '../../lib/own.js';
import type { Definition } from '../objects/definition.js';
import { isContactField, presentFieldValue, type StoredValue } from '../objects/field-values.js';
import { parseFieldValues } from '../objects/record-input.js';
import { indexedValues, type IndexedValue } from '../objects/record-values.js';
import { BUILTIN, type BuiltinResource } from './builtin-resources.js';

/**
 * The custom values of one lead, account or deal (contract §9), all through the custom-object machinery
 * (parse, present, index), so that every field type it knows works here too. Values travel in three forms:
 * in clear and stored form (dates 'YYYY-MM-DD', e-mails and phones normalized) while a write works on them,
 * sealed in the item's `custom` JSON column (e-mails and phones encrypted, bound to item and field), and as
 * the API shows them: flat beside the standard fields, every field present (null when unset).
 */

export type ClearValues = Record<string, StoredValue>;

/** What the fields of one resource of one organization need to be applied to its items. */
export interface CustomFields {
  resource: BuiltinResource;
  organizationId: string;
  definition: Definition;
}

/**
 * The organization's custom fields of a built-in resource when an import starts (`crm import`), and the create body's
 * standard and read-only keys (BUILTIN's sets, as arrays to cross to the worker thread).
 */
export interface CustomColumns {
  definition: Definition;
  writable: string[];
  readOnly: string[];
}

export const customAad = (resource: BuiltinResource, itemId: string, key: string): string => `${resource}.custom:${itemId}:${key}`;

/**
 * The custom part of a body: every key that is not a standard one (`standard`, the body's own keys) must be a
 * field of the definition (a standard read-only key, in `readOnly`, is `read_only`), its value valid; on
 * create, required fields must be present. Every problem is listed. A body of standard keys only, for an
 * organization without custom fields (most writes), costs a set lookup per key: no field set, no parsing.
 */
export function checkCustomInput(
  definition: Definition,
  input: Record<string, unknown>,
  standard: ReadonlySet<string>,
  readOnly: ReadonlySet<string>,
  mode: 'create' | 'update',
): { values: Map<string, StoredValue | null>; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const keys: string[] = [];
  let fields: Set<string> | undefined;
  for (const key of Object.keys(input)) {
    if (standard.has(key)) continue;
    fields ??= new Set(definition.fields.map((f) => f.key));
    if (fields.has(key)) keys.push(key);
    else if (readOnly.has(key)) errors.push({ field: key, code: 'read_only', message: 'is set by the server' });
    else errors.push({ field: key, code: 'unknown_field', message: 'is not a known field' });
  }
  if (definition.fields.length === 0) return { values: new Map(), errors };
  const parsed = parseFieldValues(definition, input, keys, mode);
  return { values: parsed.values, errors: [...errors, ...parsed.errors] };
}

/** checkCustomInput, throwing one 400 with every problem. */
export function parseCustomInput(...args: Parameters<typeof checkCustomInput>): Map<string, StoredValue | null> {
  const { values, errors } = checkCustomInput(...args);
  if (errors.length) throw validationFailed(errors);
  return values;
}

/** `clear` with the sent values applied (null removes one). */
export function mergeCustom(clear: ClearValues, values: ReadonlyMap<string, StoredValue | null>): ClearValues {
  const next = { ...clear };
  for (const [key, value] of values) {
    if (value === null) delete next[key];
    else next[key] = value;
  }
  return next;
}

/** An item's values after the custom part of a PATCH, in clear; undefined when the patch sends none (400 for bad ones). */
export function patchedCustom(cipher: FieldCipher, c: CustomFields, itemId: string, json: string | null, patch: Record<string, unknown>): ClearValues | undefined {
  const shape = BUILTIN[c.resource];
  const values = parseCustomInput(c.definition, patch, shape.writable, shape.readOnly, 'update');
  return values.size ? mergeCustom(openCustom(cipher, c, itemId, json), values) : undefined;
}

/** The stored JSON of an item's values (null when it has none): e-mails and phones sealed. */
export function sealCustom(cipher: FieldCipher, c: CustomFields, itemId: string, clear: ClearValues): string | null {
  const sealed: ClearValues = {};
  for (const field of c.definition.fields) {
    const value = own(clear, field.key);
    if (value === undefined) continue;
    sealed[field.key] = isContactField(field) ? cipher.encrypt(String(value), customAad(c.resource, itemId, field.key)) : value;
  }
  return Object.keys(sealed).length ? JSON.stringify(sealed) : null;
}

/** An item's stored JSON in clear (values of fields no longer defined are left out). */
export function openCustom(cipher: FieldCipher, c: CustomFields, itemId: string, json: string | null): ClearValues {
  if (json === null || c.definition.fields.length === 0) return {};
  const stored = JSON.parse(json) as ClearValues;
  const clear: ClearValues = {};
  for (const field of c.definition.fields) {
    const value = own(stored, field.key);
    if (value === undefined) continue;
    clear[field.key] = isContactField(field) ? cipher.decrypt(String(value), customAad(c.resource, itemId, field.key)) : value;
  }
  return clear;
}

/** The API form: every field, null when unset (dates as midnight UTC). */
export function presentCustom(c: CustomFields, clear: ClearValues): Record<string, StoredValue | null> {
  const shown: Record<string, StoredValue | null> = {};
  for (const field of c.definition.fields) {
    const value = own(clear, field.key);
    shown[field.key] = value === undefined ? null : presentFieldValue(field, value);
  }
  return shown;
}

/** The filterable values of an item (e-mails and phones as their blind index). */
export function customIndexed(blindIndex: BlindIndex, c: CustomFields, clear: ClearValues): IndexedValue[] {
  return indexedValues(c.definition, clear, { blindIndex, organizationId: c.organizationId });
}

/** Events show the custom keys beside the standard ones; e-mail and phone values as "[encrypted]". */
export const customEventKeys = (c: CustomFields): string[] => c.definition.fields.map((f) => f.key);
export const customContactKeys = (c: CustomFields): string[] => c.definition.fields.filter(isContactField).map((f) => f.key);

/** A new item's custom values: what its row stores, what its created event shows, what item_values indexes. */
export interface NewCustomValues {
  shown: Record<string, StoredValue | null>;
  /** The keys of `shown` that are e-mails and phones (events show them as "[encrypted]"). */
  contactKeys: string[];
  indexed: IndexedValue[];
}

export type CustomSealer = (itemId: string) => { json: string | null; values: NewCustomValues };

/** Seals the parsed values of a new item once its id is known. */
export function customSealer(crypto: { cipher: FieldCipher; blindIndex: BlindIndex }, c: CustomFields, values: ReadonlyMap<string, StoredValue | null>): CustomSealer {
  return (itemId) => {
    const clear = mergeCustom({}, values);
    return { json: sealCustom(crypto.cipher, c, itemId, clear), values: { shown: presentCustom(c, clear), contactKeys: customContactKeys(c), indexed: customIndexed(crypto.blindIndex, c, clear) } };
  };
}
