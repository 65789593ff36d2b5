import type { Field } from '../../modules/objects/definition.js';
import { BUILTIN, type BuiltinResource } from '../../modules/fields/builtin-resources.js';
import { customFieldsOf } from '../../modules/fields/custom-fields.service.js';
import { checkCustomInput } from '../../modules/fields/custom-values.js';
import { own } from '../../lib/own.js';
import { checkedBody, type FormBody } from '../forms.js';
import { html, type SafeHtml } from '../html.js';
import type { AdminDeps } from '../module.js';
import { detailRow } from './detail.views.js';
import type { EditedItem } from './edit-version.js';
import { formValues, recordBody, submittedText } from './record-values.js';
import { displayValue, fieldInput, type RelationContext } from './records.views.js';

/*
 * The organization's custom fields on the lead, account and deal pages (PATCH /objects/leads, /accounts, /deals):
 * inputs by type after the standard ones in the forms (as on record forms), rows on the detail page and one
 * table column each. Their values are flat on the item, by key, as the API returns them. Relation values read and
 * pick as on record pages: the page loads their items with relation-items.ts.
 */

type Item = object;
const valueOf = (item: Item, field: Field) => own(item as Readonly<Record<string, unknown>>, field.key);

export const customFieldsFor = async (deps: AdminDeps, organizationId: string, resource: BuiltinResource): Promise<readonly Field[]> =>
  (await customFieldsOf(deps.ctx, deps.ctx.database.db, organizationId, resource)).definition.fields;

/** The custom fields and their form text (typed, or an item's values). */
export interface CustomValues {
  fields: readonly Field[];
  values: Record<string, string>;
  timeZone: string;
}

/** The form's custom part: its text, and the items its relation pickers offer and name. */
export interface CustomForm extends CustomValues {
  relations: RelationContext;
}

/** The custom fields as tables and detail pages show them, with the live items their relation values point at. */
export interface CustomShown extends RelationContext {
  fields: readonly Field[];
}

/** An item's custom values as form text. */
export const customFormValues = (fields: readonly Field[], item: Item, timeZone: string): Record<string, string> => formValues(fields, item as Readonly<Record<string, unknown>>, timeZone);

/** The text of a submitted form's custom inputs. */
export const readCustom = (fields: readonly Field[], body: FormBody): Record<string, string> => Object.fromEntries(fields.map((f) => [f.key, submittedText(body, f)]));

/** The custom part of the API body: blank inputs left out on create; on edit (`before`) only the changed ones, a blank one clearing. */
export function customBody(custom: CustomValues, before?: Item): Record<string, unknown> {
  const { fields, values, timeZone } = custom;
  return recordBody(fields, values, before ? { timeZone, before: customFormValues(fields, before, timeZone) } : { timeZone });
}

/**
 * A lead, account or deal form's API body checked as the API checks one: the schema, and the custom values as
 * the route's preValidation does, so one 400 lists every bad field (contract §9) rather than the custom ones
 * only once the standard ones pass.
 */
export function checkedItemBody<T>(schema: object, resource: BuiltinResource, fields: readonly Field[], mode: 'create' | 'update', body: Record<string, unknown>): T {
  const { writable, readOnly } = BUILTIN[resource];
  return checkedBody<T>(schema, body, checkCustomInput({ fields: [...fields], stages: [] }, body, writable, readOnly, mode).errors);
}

/** A lead, account or deal as its edit form shows it (edit-version.ts): the standard inputs, then the custom ones. */
export function editedWithCustom<T extends Item>(key: string, labels: Readonly<Record<string, string>>, standard: (item: T) => Readonly<Record<string, string>>, custom: Omit<CustomValues, 'values'>): EditedItem<T> {
  return {
    key,
    noun: key,
    labels: withCustomLabels(labels, custom.fields),
    formOf: (item) => ({ ...standard(item), ...customFormValues(custom.fields, item, custom.timeZone) }),
  };
}

/** The form's labels with the custom fields', so the error summary names them. */
export const withCustomLabels = (labels: Readonly<Record<string, string>>, fields: readonly Field[]): Record<string, string> => ({
  ...labels,
  ...Object.fromEntries(fields.map((f) => [f.key, f.label])),
});

export const customInputs = (custom: CustomForm, errors: Readonly<Record<string, string>>): SafeHtml[] =>
  custom.fields.map((field) => fieldInput(field, own(custom.values, field.key) ?? '', own(errors, field.key), custom.timeZone, custom.relations));

export const customRows = (custom: CustomShown, item: Item, timeZone: string): SafeHtml[] => custom.fields.map((field) => detailRow(field.label, displayValue(field, valueOf(item, field), timeZone, custom)));

export const customCells = (custom: CustomShown, item: Item, timeZone: string): SafeHtml[] => custom.fields.map((field) => html`<td>${displayValue(field, valueOf(item, field), timeZone, custom) ?? ''}</td>`);

export const customHeadings = (fields: readonly Field[]): string[] => fields.map((f) => f.label);
