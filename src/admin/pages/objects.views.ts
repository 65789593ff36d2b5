import type { FastifyRequest } from 'fastify';
import { FIELD_TYPES, type CustomObject, type FieldType } from '../../modules/objects/objects.schemas.js';
import { badge, button, checkbox, csrfField, dataTable, errorSummary, selectField, textArea, textField } from '../components.js';
import { dayTag } from '../format.js';
import type { FormProblem } from '../forms.js';
import { html, type SafeHtml } from '../html.js';
import { filledRows, type Row } from '../rows.js';
import { versionField } from './edit-version.js';

export const OBJECTS_PATH = '/admin/config/objects';
export const RECORDS_PATH = '/admin/data/objects';
/** Leads, accounts and deals have pages of their own under Data, at their slug. */
export const builtInPage = (slug: string) => `/admin/data/${slug}`;

/** An object's items in the console: a built-in's own pages (GET /objects lists them too), else its records'. */
export const itemsPage = (o: Pick<CustomObject, 'slug' | 'builtIn'>) => (o.builtIn ? builtInPage(o.slug) : `${RECORDS_PATH}/${o.slug}`);

/** An object's items in the API: a built-in's own resource, else its records. */
export const itemsApiPath = (o: Pick<CustomObject, 'slug' | 'builtIn'>) => `/api/public/v1/${o.builtIn ? o.slug : `objects/${o.slug}/records`}`;

/** An object's definition page; under its slug, so no slug (not even "new") can collide with the create form. */
export const definitionPath = (slug: string) => `${OBJECTS_PATH}/${slug}/definition`;

export const FIELD_KEYS = ['key', 'label', 'type', 'required', 'role', 'options', 'target'] as const;
export const STAGE_KEYS = ['key', 'label'] as const;
export type FieldRow = Row<(typeof FIELD_KEYS)[number]>;
export type StageRow = Row<(typeof STAGE_KEYS)[number]>;

export const TYPE_LABELS: Record<FieldType, string> = {
  text: 'Text',
  long_text: 'Long text',
  number: 'Number',
  boolean: 'Yes / no',
  date: 'Date',
  datetime: 'Date and time',
  select: 'Select (options)',
  multi_select: 'Multi-select (options)',
  email: 'E-mail',
  phone: 'Phone',
  url: 'URL',
  relation: 'Relation (to a lead, account, deal or record)',
};

/** A draft of the definition form: what the user typed, row by row, before the service accepts it. */
export interface ObjectDraft {
  slug: string;
  name: string;
  fields: FieldRow[];
  stages: StageRow[];
}

/** The editable definition: a built-in resource's standard fields (read-only) are shown, not edited. */
export function draftOf(o: CustomObject): ObjectDraft {
  return {
    slug: o.slug,
    name: o.name,
    fields: o.fields.filter((f) => !f.readOnly).map((f) => ({ key: f.key, label: f.label, type: f.type, required: f.required ? 'on' : '', role: f.role ?? '', options: (f.options ?? []).join('\n'), target: f.target ?? '' })),
    stages: o.stages.map((s) => ({ key: s.key, label: s.label })),
  };
}

const fieldText = (r: FieldRow): string =>
  [
    r.key.trim(),
    r.label.trim(),
    r.type,
    r.required === 'on' ? 'required' : '',
    r.role === 'due' ? 'due date' : '',
    r.options.trim() ? `options ${r.options.split(/\r?\n/).map((o) => o.trim()).filter((o) => o !== '').join(', ')}` : '',
    r.target.trim() ? `points at ${r.target.trim()}` : '',
  ].filter((part) => part !== '').join(', ');

/**
 * A draft's text as a save refused over a change made meanwhile quotes it (edit-version.ts): the name and each
 * filled row, keyed by how the message names them ("Field 3"), rows at their places in the form.
 */
export function draftText(draft: ObjectDraft): Record<string, string> {
  const fields = filledRows(draft.fields, ['key', 'label']).map(({ row, at }) => [`Field ${at + 1}`, fieldText(row)]);
  const stages = filledRows(draft.stages, ['key', 'label']).map(({ row, at }) => [`Stage ${at + 1}`, `${row.key.trim()}, ${row.label.trim()}`]);
  return { Name: draft.name, ...Object.fromEntries([...fields, ...stages]) };
}

/** "fields.2.key" → "Field 3 key": how the error summary names a row's input. */
function rowLabel(field: string): string {
  const m = /^(fields|stages)\.(\d+)\.(\w+)$/.exec(field);
  if (m) return `${m[1] === 'fields' ? 'Field' : 'Stage'} ${Number(m[2]) + 1} ${m[3] === 'role' ? 'due date' : m[3]}`;
  return { slug: 'Slug', name: 'Name', fields: 'Fields', stages: 'Stages' }[field] ?? field;
}

/** One field's row; a built-in's fields take no due-date role (leads, accounts and deals have no reminders). */
function fieldRow(row: FieldRow, i: number, f: Record<string, string>, builtIn: boolean): SafeHtml {
  const at = `fields.${i}`;
  return html`<fieldset class="row-editor row-editor--field" id="f-fields-${i}">
  <legend>Field ${i + 1}</legend>
  ${textField({ name: `${at}.key`, label: 'Key', value: row.key, error: f[`${at}.key`], markOptional: false, autocomplete: 'off', maxLength: 50 })}
  ${textField({ name: `${at}.label`, label: 'Label', value: row.label, error: f[`${at}.label`], markOptional: false, autocomplete: 'off', maxLength: 100 })}
  ${selectField({ name: `${at}.type`, label: 'Type', value: row.type || 'text', error: f[`${at}.type`], options: FIELD_TYPES.map((t) => ({ value: t, label: TYPE_LABELS[t] })), markOptional: false })}
  ${textArea({ name: `${at}.options`, label: 'Options', value: row.options, error: f[`${at}.options`], rows: 2, markOptional: false, hint: 'Select and multi-select fields only: one per line.' })}
  ${textField({ name: `${at}.target`, label: 'Points at', value: row.target, error: f[`${at}.target`], markOptional: false, autocomplete: 'off', maxLength: 50, hint: 'Relation fields only: leads, accounts, deals or an object slug.' })}
  <div class="row-checks">
    ${checkbox({ name: `${at}.required`, label: 'Required', checked: row.required === 'on', error: f[`${at}.required`] })}
    ${builtIn ? '' : checkbox({ name: `${at}.role`, value: 'due', label: 'Due date', checked: row.role === 'due', error: f[`${at}.role`], hint: 'One date field: overdue filter and reminders.' })}
  </div>
</fieldset>`;
}

function stageRow(row: StageRow, i: number, f: Record<string, string>): SafeHtml {
  const at = `stages.${i}`;
  return html`<fieldset class="row-editor" id="f-stages-${i}">
  <legend>Stage ${i + 1}</legend>
  ${textField({ name: `${at}.key`, label: 'Key', value: row.key, error: f[`${at}.key`], markOptional: false, autocomplete: 'off', maxLength: 50 })}
  ${textField({ name: `${at}.label`, label: 'Label', value: row.label, error: f[`${at}.label`], markOptional: false, autocomplete: 'off', maxLength: 100 })}
</fieldset>`;
}

const listError = (id: string, message: string | undefined) => (message ? html`<p class="field-error" id="f-${id}-error"><span class="visually-hidden">Error:</span> ${message}</p>` : '');

/**
 * The definition form: slug (on create), name, a row per field and per stage plus blank rows; "Add more
 * rows" re-renders the draft with more. Works without script. A change is saved against `version`, the ETag of the
 * definition the form was opened with.
 */
export function objectForm(request: FastifyRequest, opts: { action: string; draft: ObjectDraft; problem?: FormProblem | undefined; creating: boolean; builtIn: boolean; version?: string | undefined }): SafeHtml {
  const f = opts.problem?.fields ?? {};
  const d = opts.draft;
  const labels = Object.fromEntries(Object.keys(f).map((k) => [k, rowLabel(k)]));
  return html`${errorSummary(opts.problem, labels)}
<form method="post" action="${opts.action}" class="form form--wide" novalidate>
  ${csrfField(request)}${versionField(opts.version)}
  ${opts.creating ? textField({ name: 'slug', label: 'Slug', value: d.slug, error: f.slug, required: true, autocomplete: 'off', maxLength: 50, hint: 'Its name in URLs and in the API (/objects/<slug>/records): lower-case letters, digits, _ and -. It can’t change later.' }) : ''}
  ${textField({ name: 'name', label: 'Name', value: d.name, error: f.name, required: true, maxLength: 100, autocomplete: 'off' })}
  <h2 id="fields-heading">Fields</h2>
  <p class="hint">Keys are lower-case letters, digits and _, starting with a letter; records store values under them. A field with data can’t be removed or change type. To remove a field, empty its key and label.</p>
  ${listError('fields', f.fields)}
  <div class="rows" id="f-fields" role="group" aria-labelledby="fields-heading">${d.fields.map((row, i) => fieldRow(row, i, f, opts.builtIn))}</div>
  <p>${button('Add more field rows', 'secondary', html` name="_action" value="more:fields" formnovalidate`)}</p>
  ${opts.builtIn ? '' : html`<h2 id="stages-heading">Stages</h2>
  <p class="hint">Optional, in order: a new record starts in the first. A stage that records are in can’t be removed.</p>
  ${listError('stages', f.stages)}
  <div class="rows" id="f-stages" role="group" aria-labelledby="stages-heading">${d.stages.map((row, i) => stageRow(row, i, f))}</div>
  <p>${button('Add more stage rows', 'secondary', html` name="_action" value="more:stages" formnovalidate`)}</p>`}
  <div class="form-actions">${button(opts.creating ? 'Create object' : 'Save definition')} <a href="${OBJECTS_PATH}">Cancel</a></div>
</form>`;
}

export function objectsTable(objects: readonly CustomObject[], timeZone: string, isAdmin: boolean): SafeHtml {
  const rows = objects.map(
    (o) => html`<tr>
  <td><a href="${definitionPath(o.slug)}">${o.name}</a></td>
  <td><code>${o.slug}</code></td>
  <td>${o.fields.length}</td>
  <td>${o.stages.length ? o.stages.map((s) => s.label).join(' → ') : html`<span class="muted">None</span>`}</td>
  <td>${dayTag(o.createdAt, timeZone)}</td>
  <td class="actions"><a href="${itemsPage(o)}">Records</a>${isAdmin ? html` · <a href="${definitionPath(o.slug)}" aria-label="Edit the definition of ${o.name}">Edit</a>` : ''}</td>
</tr>`,
  );
  return dataTable('Custom objects', ['Name', 'Slug', 'Fields', 'Stages', 'Defined', 'Open'], rows, 'No custom objects yet.');
}

/** The definition as read-only tables (what members see, and admins above their editor). */
export function definitionTables(o: CustomObject): SafeHtml {
  // A relation names what it points at: the type alone would not say whether it takes a lead or a project.
  const type = (f: CustomObject['fields'][number]) => (f.type === 'relation' ? html`Relation to <code>${f.target ?? ''}</code>` : TYPE_LABELS[f.type]);
  const fields = o.fields.map(
    (f) => html`<tr><td>${f.label}</td><td><code>${f.key}</code></td><td>${type(f)}</td><td>${f.required ? 'Yes' : 'No'}</td><td>${f.options?.join(', ') ?? ''}</td><td>${f.role === 'due' ? badge('Due date') : ''}</td></tr>`,
  );
  const stages = o.stages.map((s, i) => html`<tr><td>${i + 1}</td><td>${s.label}</td><td><code>${s.key}</code></td></tr>`);
  return html`<section class="panel" aria-labelledby="def-fields"><h2 id="def-fields">Fields</h2>${dataTable(`Fields of ${o.name}`, ['Label', 'Key', 'Type', 'Required', 'Options', 'Role'], fields, 'No fields.')}</section>
${o.builtIn ? '' : html`<section class="panel" aria-labelledby="def-stages"><h2 id="def-stages">Stages</h2>${dataTable(`Stages of ${o.name}`, ['Order', 'Label', 'Key'], stages, 'No stages: records of this object have none.')}</section>`}`;
}
