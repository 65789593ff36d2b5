import type { FieldError } from '../../errors.js';
import { MAX_FIELDS, RESERVED_KEYS, type FieldDefinition, type FieldType, type StageDefinition } from './objects.schemas.js';

/** A field as kept in a definition: `required` always present, `options` only on (multi) selects, `target` only on relations, `role` only when set. */
export interface Field {
  key: string;
  label: string;
  type: FieldType;
  required: boolean;
  options?: string[];
  target?: string;
  role?: 'due';
}

const OPTION_TYPES: ReadonlySet<FieldType> = new Set(['select', 'multi_select']);
export const hasOptions = (f: Pick<Field, 'type'>): boolean => OPTION_TYPES.has(f.type);

export interface Definition {
  fields: Field[];
  stages: StageDefinition[];
}

export function normalizeField(f: FieldDefinition): Field {
  return {
    key: f.key,
    label: f.label.trim(),
    type: f.type,
    required: f.required === true,
    // In NFC, so that two spellings of one option (a precomposed é, or e and a combining accent) are one option.
    ...(f.options !== undefined ? { options: f.options.map((o) => o.normalize('NFC')) } : {}),
    ...(f.target !== undefined ? { target: f.target } : {}),
    ...(f.role !== undefined ? { role: f.role } : {}),
  };
}

export const dueField = (d: Definition): Field | undefined => d.fields.find((f) => f.role === 'due');

/**
 * Names every JavaScript object already has (`constructor`, `toString`, `__proto__`, …): as a field key, such a
 * name reads as present on any object (`key in values`, `values[key]`), so a required field would never be
 * enforced and an unset one would read as a function.
 */
export const PROTOTYPE_KEYS: ReadonlySet<string> = new Set(Object.getOwnPropertyNames(Object.prototype));

/**
 * The rules of a definition that JSON Schema can't express: unique and non-reserved keys (a prototype name
 * stays allowed only on a field already defined with it, in `existingKeys`), options exactly on select and
 * multi_select fields, a target exactly on relation fields (whether it exists is the service's check),
 * `role: due` only on a date field and at most once, unique stage keys. Every problem is
 * reported, with the path of the offending entry (e.g. `fields.2.key`).
 */
export function definitionErrors(d: Definition, existingKeys: ReadonlySet<string> = new Set()): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  let dueAt: number | undefined;
  if (d.fields.length > MAX_FIELDS) errors.push({ field: 'fields', code: 'too_long', message: `must have at most ${MAX_FIELDS} custom fields` });
  d.fields.forEach((f, i) => {
    const at = `fields.${i}`;
    if ((RESERVED_KEYS as readonly string[]).includes(f.key)) {
      errors.push({ field: `${at}.key`, code: 'reserved', message: `"${f.key}" is reserved (${RESERVED_KEYS.join(', ')} are record properties)` });
    } else if (PROTOTYPE_KEYS.has(f.key) && !existingKeys.has(f.key)) {
      errors.push({ field: `${at}.key`, code: 'reserved', message: `"${f.key}" is a name every JavaScript object has; choose another key (e.g. ${f.key}Value)` });
    } else if (seen.has(f.key)) {
      errors.push({ field: `${at}.key`, code: 'duplicate', message: `"${f.key}" is used by another field` });
    }
    seen.add(f.key);
    if (hasOptions(f) && (f.options === undefined || f.options.length === 0)) {
      errors.push({ field: `${at}.options`, code: 'required', message: `are required on a ${f.type} field (at least one)` });
    }
    if (f.options !== undefined && new Set(f.options).size !== f.options.length) {
      errors.push({ field: `${at}.options`, code: 'duplicate', message: 'must not list an option twice (also as two Unicode spellings of the same text)' });
    }
    if (!hasOptions(f) && f.options !== undefined) {
      errors.push({ field: `${at}.options`, code: 'not_allowed', message: 'are only allowed on a select or multi_select field' });
    }
    if (f.type === 'relation' && f.target === undefined) {
      errors.push({ field: `${at}.target`, code: 'required', message: 'is required on a relation field (leads, accounts, deals or an object slug)' });
    }
    if (f.type !== 'relation' && f.target !== undefined) {
      errors.push({ field: `${at}.target`, code: 'not_allowed', message: 'is only allowed on a relation field' });
    }
    if (f.role === 'due') {
      if (f.type !== 'date') errors.push({ field: `${at}.role`, code: 'not_allowed', message: 'is only allowed on a date field' });
      else if (dueAt !== undefined) errors.push({ field: `${at}.role`, code: 'duplicate', message: `is already fields.${dueAt}'s: only one field can be the due date` });
      else dueAt = i;
    }
  });
  const stageKeys = new Set<string>();
  d.stages.forEach((s, i) => {
    if (stageKeys.has(s.key)) errors.push({ field: `stages.${i}.key`, code: 'duplicate', message: `"${s.key}" is used by another stage` });
    stageKeys.add(s.key);
  });
  return errors;
}

/** What a definition change does to existing data; each entry must be checked against the records. */
export interface DefinitionChange {
  removedFields: Field[];
  retypedFields: { before: Field; after: Field; index: number }[];
  removedOptions: { field: Field; index: number; options: string[] }[];
  newlyRequired: { field: Field; index: number }[];
  roleChanged: { field: Field; index: number }[];
  removedStages: StageDefinition[];
}

/** Compares two definitions field by field (by key) and stage by stage; a relation pointing elsewhere counts as retyped. */
export function diffDefinitions(before: Definition, after: Definition): DefinitionChange {
  const change: DefinitionChange = { removedFields: [], retypedFields: [], removedOptions: [], newlyRequired: [], roleChanged: [], removedStages: [] };
  const next = new Map(after.fields.map((f, index) => [f.key, { f, index }]));
  for (const old of before.fields) {
    const found = next.get(old.key);
    if (!found) {
      change.removedFields.push(old);
      continue;
    }
    const { f, index } = found;
    if (f.type !== old.type || f.target !== old.target) {
      change.retypedFields.push({ before: old, after: f, index });
      continue;
    }
    const dropped = (old.options ?? []).filter((o) => !(f.options ?? []).includes(o));
    if (dropped.length) change.removedOptions.push({ field: f, index, options: dropped });
    if (f.required && !old.required) change.newlyRequired.push({ field: f, index });
    if (f.role !== old.role) change.roleChanged.push({ field: f, index });
  }
  const oldKeys = new Set(before.fields.map((f) => f.key));
  after.fields.forEach((f, index) => {
    if (oldKeys.has(f.key)) return;
    if (f.required) change.newlyRequired.push({ field: f, index });
  });
  const stageKeys = new Set(after.stages.map((s) => s.key));
  change.removedStages = before.stages.filter((s) => !stageKeys.has(s.key));
  return change;
}
