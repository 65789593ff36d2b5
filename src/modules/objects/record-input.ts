import type { FieldError } from '../../errors.js';
import { RESERVED_KEYS } from './objects.schemas.js';
import type { Definition } from './definition.js';
import { parseFieldValue, type StoredValue } from './field-values.js';

export interface ParsedInput {
  /** The sent fields in stored form (e-mails and phones still in clear); null clears. */
  values: Map<string, StoredValue | null>;
  /** The stage to set; undefined when the input leaves it as it is. */
  stage: string | null | undefined;
  /** The external id to set (null clears it); undefined when the input leaves it as it is. */
  externalId: string | null | undefined;
  errors: FieldError[];
}

function stageError(definition: Definition, value: unknown): FieldError | null {
  const keys = definition.stages.map((s) => s.key);
  if (keys.length === 0) {
    return value === null ? null : { field: 'stage', code: 'not_allowed', message: 'this object has no stages; send null or leave it out' };
  }
  if (typeof value === 'string' && keys.includes(value)) return null;
  return { field: 'stage', code: 'invalid_value', message: `must be one of: ${keys.join(', ')}` };
}

/**
 * Checks field values against a definition's fields: wrong types and formats, bad options, impossible dates,
 * a required field cleared with null or [], and (`create`) required fields missing from `input` (own
 * properties only, so a prototype name is never taken as present). Keys that are not fields are the caller's
 * to judge; whether a relation's id names a live item is checked apart, against the database
 * (relation-targets.ts).
 */
export function parseFieldValues(definition: Definition, input: Record<string, unknown>, keys: readonly string[], mode: 'create' | 'update'): { values: Map<string, StoredValue | null>; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const values = new Map<string, StoredValue | null>();
  const fields = new Map(definition.fields.map((f) => [f.key, f]));
  for (const key of keys) {
    const field = fields.get(key)!;
    const value = input[key];
    // An empty multi_select holds no option: it clears like null, and a required one must have one.
    if (value === null || (field.type === 'multi_select' && Array.isArray(value) && value.length === 0)) {
      if (field.required) errors.push({ field: key, code: 'required', message: mode === 'create' ? 'is required' : 'is required and cannot be cleared' });
      else values.set(key, null);
      continue;
    }
    const parsed = parseFieldValue(field, value);
    if (parsed.ok) values.set(key, parsed.value);
    else errors.push({ field: key, code: parsed.code, message: parsed.message });
  }
  if (mode === 'create') {
    for (const field of definition.fields) {
      if (field.required && !Object.hasOwn(input, field.key)) errors.push({ field: field.key, code: 'required', message: 'is required' });
    }
  }
  return { values, errors };
}

/**
 * Checks a record body against the object's definition and collects every problem: unknown or read-only keys,
 * the field values (parseFieldValues), and a stage that isn't one of the object's.
 */
export function parseRecordInput(definition: Definition, input: Record<string, unknown>, mode: 'create' | 'update'): ParsedInput {
  const errors: FieldError[] = [];
  const fields = new Set(definition.fields.map((f) => f.key));
  const fieldKeys: string[] = [];
  let stage: string | null | undefined;
  let externalId: string | null | undefined;
  for (const [key, value] of Object.entries(input)) {
    if (key === 'externalId') {
      if (value === null || (typeof value === 'string' && value.length >= 1 && value.length <= 255)) externalId = value;
      else errors.push({ field: key, code: 'invalid_value', message: 'must be a string of 1 to 255 characters, or null' });
      continue;
    }
    if (key === 'stage') {
      const error = stageError(definition, value);
      if (error) errors.push(error);
      else stage = value as string | null;
      continue;
    }
    if (fields.has(key)) {
      fieldKeys.push(key);
      continue;
    }
    const readOnly = (RESERVED_KEYS as readonly string[]).includes(key);
    errors.push(readOnly ? { field: key, code: 'read_only', message: 'is set by the server' } : { field: key, code: 'unknown_field', message: 'is not a field of this object' });
  }
  const parsed = parseFieldValues(definition, input, fieldKeys, mode);
  errors.push(...parsed.errors);
  if (mode === 'create' && stage === undefined && definition.stages.length > 0) stage = definition.stages[0]!.key;
  return { values: parsed.values, stage, externalId, errors };
}
