import { normalizeContacts, type ContactCrypto } from '../../crypto/contact-fields.js';
import { AppError, type FieldError } from '../../errors.js';
import { validateValue } from '../../http/validation.js';
import type { BuiltinResource } from '../fields/builtin-resources.js';
import { checkCustomInput, customSealer, type CustomColumns } from '../fields/custom-values.js';
import type { CreateLeadBody } from '../leads/leads.schemas.js';
import { newLead } from '../leads/new-lead.js';
import type { Field } from '../objects/definition.js';
import type { StoredValue } from '../objects/field-values.js';
import { recordFromCells } from '../objects/record-cells.js';

/**
 * The half of an import that runs in the worker thread, with no database: CSV cells become the JSON the
 * create schema expects, are validated like an API body, then prepared for the resource's batch create.
 * This module and what it imports are all the worker loads, so no service or store module belongs here: the
 * create schema and the organization's custom fields arrive from the main thread as data. (The custom values'
 * parser, shared with the API, brings the objects' TypeBox schemas along.)
 */
export interface RowPreparer {
  /** CSV cells are text: turn a row's non-empty cells into the JSON the create schema expects. */
  fromCsv(cells: Record<string, string>): Record<string, unknown>;
  /** The row's custom field values and their problems, by the API's parser (a lead's, account's or deal's; none for records). */
  custom(input: Record<string, unknown>): CustomCheck;
  /** CPU work done ahead of the inserts (leads: contacts normalized and sealed); throws AppError for a bad row. */
  prepare(input: unknown, now: Date, custom: CustomCheck['values']): unknown;
}

type CustomCheck = { values: Map<string, StoredValue | null>; errors: FieldError[] };

/** Names a preparer and the plain data it needs; sent to the worker thread, so it holds no functions. */
export type PreparerRef = { kind: BuiltinResource; custom: CustomColumns } | { kind: 'records'; fields: Field[] };

/** What every preparer may use: the organization the rows go to and the contact-field crypto. */
export interface PreparerEnv {
  organizationId: string;
  crypto: ContactCrypto;
}

const asIs = (input: unknown) => input;
const noCustom = (): CustomCheck => ({ values: new Map(), errors: [] });

/**
 * The standard cells of a lead, account or deal are text, as they are; its custom cells are typed as a custom
 * object's (record-cells.ts) and checked by the API's parser: unknown keys, types, required fields. With
 * `upsert` (`crm import --upsert-by`) a row is checked as an upsert item of POST /{resource}/batch is: its custom
 * values as an update's (a required field is enforced by the create, if the row creates), and it stays the
 * create body, for the batch runner, which matches it and prepares what it creates in its transaction.
 */
export function createPreparer(ref: PreparerRef, env: PreparerEnv, upsert: boolean): RowPreparer {
  if (ref.kind === 'records') return { fromCsv: recordFromCells(ref.fields), custom: noCustom, prepare: asIs };
  const { definition, writable, readOnly } = ref.custom;
  const standard = new Set(writable);
  const setByServer = new Set(readOnly);
  const mode = upsert ? 'update' : 'create';
  const base = { fromCsv: recordFromCells(definition.fields), custom: (input: Record<string, unknown>) => checkCustomInput(definition, input, standard, setByServer, mode) };
  if (ref.kind !== 'leads' || upsert) return { ...base, prepare: asIs };
  const fields = { resource: ref.kind, organizationId: env.organizationId, definition };
  return {
    ...base,
    prepare: (input, now, custom) =>
      newLead(env.crypto, env.organizationId, input as CreateLeadBody, normalizeContacts(input as CreateLeadBody), now, definition.fields.length ? customSealer(env.crypto, fields, custom) : undefined),
  };
}

/** A row ready for the batch create, with its line number in the file (the header is line 1). */
export interface PreparedRow {
  line: number;
  item: unknown;
}

/** A refused row: its line number and every reason. */
export interface RowError {
  line: number;
  errors: FieldError[];
}

/** What a column name can be: every field name is a word (`phoneNumber`, `due_on`). */
const FIELD_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

/**
 * The header row's column names. A cell that can't be a field name is named by its position ("column 2"):
 * reported as an unknown field either way, but a file without a header row has data there, e.g. an e-mail,
 * which must not be echoed in every row's errors.
 */
export function columnNames(header: readonly string[]): string[] {
  return header.map((cell, i) => (FIELD_NAME.test(cell.trim()) ? cell.trim() : `column ${i + 1}`));
}

/**
 * The header's columns that name no field of the create schema (nor, for a built-in resource, a custom field),
 * as `unknown_field` errors, and those naming a field set by the server as `read_only`: a typo in the header is
 * one mistake, reported once, not once per row (every row would be refused, or lose the column where empty).
 */
export function unknownColumns(preparer: RowPreparer, schema: object, header: readonly string[]): FieldError[] {
  const everyColumnSet = preparer.fromCsv(Object.fromEntries(header.map((name) => [name, '0'])));
  return [...validateValue(schema, everyColumnSet, 'row'), ...preparer.custom(everyColumnSet).errors].filter((e) => e.code === 'unknown_field' || e.code === 'read_only');
}

/** One CSV record checked and prepared: the header's cell count, the create schema, then the preparer's own rules. */
export function prepareRow(preparer: RowPreparer, schema: object, header: readonly string[], record: readonly string[], line: number, now: Date): PreparedRow | RowError {
  if (record.length !== header.length) {
    return { line, errors: [{ field: 'row', code: 'invalid_format', message: `has ${record.length} cells; the header has ${header.length}` }] };
  }
  const cells: Record<string, string> = {};
  header.forEach((name, i) => {
    if (record[i]!.trim() !== '') cells[name] = record[i]!;
  });
  const input = preparer.fromCsv(cells);
  const custom = preparer.custom(input);
  const errors = [...validateValue(schema, input, 'row'), ...custom.errors];
  if (errors.length > 0) return { line, errors };
  try {
    return { line, item: preparer.prepare(input, now, custom.values) };
  } catch (err) {
    if (err instanceof AppError && err.errors) return { line, errors: err.errors };
    throw err;
  }
}
