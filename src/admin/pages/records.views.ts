import type { FastifyRequest } from 'fastify';
import type { Pagination } from '../../lib/pagination.js';
import type { Field } from '../../modules/objects/definition.js';
import type { CustomObject } from '../../modules/objects/objects.schemas.js';
import type { RecordView } from '../../modules/objects/records.service.js';
import { badge, button, checkbox, checkboxGroup, csrfField, pickerField, type PickerItem, dataTable, errorSummary, pager, searchForm, selectField, textArea, textField, type Option } from '../components.js';
import { listControls, listControlsParams, TIME_CONSOLE_SORTS, type ListControls } from '../list-controls.js';
import { dayOnly, dayTag, timeTag } from '../format.js';
import type { FormProblem } from '../forms.js';
import { html, type SafeHtml } from '../html.js';
import { detailRow, historyPanel, type ConsoleTimeline } from './detail.views.js';
import { definitionPath, RECORDS_PATH } from './objects.views.js';
import { own } from '../../lib/own.js';
import { targetName } from '../../modules/objects/field-values.js';
import type { PointingRecords } from '../../modules/objects/related-records.js';
import { textOptions } from './record-values.js';
import { versionField } from './edit-version.js';

export const recordsPath = (slug: string) => `${RECORDS_PATH}/${slug}`;

const stageOptions = (o: CustomObject): Option[] => o.stages.map((s) => ({ value: s.key, label: s.label }));
export const dueFieldOf = (o: CustomObject): Field | undefined => o.fields.find((f) => f.role === 'due');

/** The field whose value names a record in tables and titles: the first text field, else the first field. */
export function titleField(o: CustomObject): Field | undefined {
  return o.fields.find((f) => f.type === 'text') ?? o.fields[0];
}

export function recordTitle(o: CustomObject, r: RecordView): string {
  const field = titleField(o);
  const value = field ? own(r, field.key) : null;
  return value === null || value === undefined || value === '' ? `${o.name} ${r.id.slice(-6)}` : String(value);
}

/** A live item a relation value points at, as a page links it. */
export interface RelatedItem {
  name: string;
  href: string;
}

/** What the console knows of relation fields: the live items values point at, and the newest items per field for pickers. */
export interface RelationContext {
  related: ReadonlyMap<string, RelatedItem>;
  choices?: Readonly<Record<string, PickerItem[]>>;
}
const NO_RELATIONS: RelationContext = { related: new Map() };

/** "leads", or "records of projects": what a relation's picker offers. */
const targetPlural = (target: string | undefined) => targetName(target).replace(/^an? (lead|account|deal)$/, '$1s').replace(/^a record of /, 'records of ');

/** One input per field, by type: date and datetime-local pickers, selects for options and yes/no, checkboxes for multi-selects, an item picker for relations, text otherwise. */
export function fieldInput(field: Field, value: string, error: string | undefined, timeZone: string, relations: RelationContext = NO_RELATIONS): SafeHtml {
  const common = { name: field.key, label: field.label, value, error, required: field.required };
  switch (field.type) {
    case 'long_text':
      return textArea({ ...common, rows: 4 });
    case 'select':
      return selectField({ ...common, options: (field.options ?? []).map((o) => ({ value: o, label: o })), blank: 'Not set' });
    case 'boolean':
      return selectField({ ...common, options: [{ value: 'true', label: 'Yes' }, { value: 'false', label: 'No' }], blank: 'Not set' });
    case 'date':
      return textField({ ...common, type: 'date', hint: field.role === 'due' ? 'The due date: the record is overdue after this day.' : undefined });
    case 'datetime':
      return textField({ ...common, type: 'datetime-local', hint: `In the organization’s time zone (${timeZone}).` });
    case 'number':
      return textField({ ...common, inputMode: 'decimal', autocomplete: 'off' });
    case 'email':
      return textField({ ...common, type: 'email', autocomplete: 'off' });
    case 'phone':
      return textField({ ...common, type: 'tel', autocomplete: 'off', hint: 'International format with the country code, e.g. +14155550100.' });
    case 'url':
      return textField({ ...common, type: 'url', autocomplete: 'off' });
    case 'text':
      return textField({ ...common, maxLength: 1000, autocomplete: 'off' });
    case 'multi_select':
      return checkboxGroup({ ...common, options: (field.options ?? []).map((o) => ({ value: o, label: o })), checked: new Set(textOptions(value)) });
    case 'relation':
      return pickerField({ ...common, items: relations.choices?.[field.key] ?? [], currentName: relations.related.get(value)?.name, what: targetPlural(field.target) });
  }
}

/** The create and edit form, generated from the object's definition; errors are keyed by field key, as the API reports them. */
export function recordForm(
  request: FastifyRequest,
  o: CustomObject,
  opts: { action: string; values: Record<string, string>; stage: string; problem?: FormProblem | undefined; creating: boolean; timeZone: string; cancel: string; relations: RelationContext; version?: string | undefined },
): SafeHtml {
  const f = opts.problem?.fields ?? {};
  const labels = { stage: 'Stage', ...Object.fromEntries(o.fields.map((field) => [field.key, field.label])) };
  return html`${errorSummary(opts.problem, labels)}
<form method="post" action="${opts.action}" class="form form--grid" novalidate>
  ${csrfField(request)}${versionField(opts.version)}
  ${o.fields.map((field) => fieldInput(field, own(opts.values, field.key) ?? '', own(f, field.key), opts.timeZone, opts.relations))}
  ${o.stages.length ? selectField({ name: 'stage', label: 'Stage', value: opts.stage || o.stages[0]!.key, error: f.stage, options: stageOptions(o), required: true }) : ''}
  <div class="form-actions">${button(opts.creating ? `Create ${o.name} record` : 'Save changes')} <a href="${opts.cancel}">Cancel</a></div>
</form>`;
}

/**
 * A stored value for reading: Yes/No, days and instants in the organization's terms, links for URLs, a
 * relation as a link named after its item (the bare id when the item is trashed or gone).
 */
export function displayValue(field: Field, value: unknown, timeZone: string, relations: RelationContext = NO_RELATIONS): SafeHtml | string | null {
  if (value === null || value === undefined || value === '') return null;
  switch (field.type) {
    case 'boolean':
      return value ? 'Yes' : 'No';
    case 'date':
      return dayOnly(String(value));
    case 'datetime':
      return timeTag(String(value), timeZone);
    case 'url':
      return html`<a href="${String(value)}" rel="noopener noreferrer">${String(value)}</a>`;
    case 'multi_select':
      return Array.isArray(value) ? value.join(', ') : String(value);
    case 'relation': {
      const item = relations.related.get(String(value));
      return item ? html`<a href="${item.href}">${item.name}</a>` : html`<code>${String(value)}</code> <span class="muted">(not found)</span>`;
    }
    default:
      return String(value);
  }
}

export interface RecordFilters {
  q: string;
  stage: string;
  overdue: boolean;
}

/** The orders of an object's records: creation and change times, then each date and number field both ways. */
function recordSorts(o: CustomObject): Option[] {
  const sortable = o.fields.filter((field) => field.type === 'date' || field.type === 'datetime' || field.type === 'number');
  return [...TIME_CONSOLE_SORTS, ...sortable.flatMap((field) => [{ value: field.key, label: `${field.label} ↑` }, { value: `-${field.key}`, label: `${field.label} ↓` }])];
}

export function recordFilterForm(o: CustomObject, filters: RecordFilters, problem: FormProblem | undefined, controls: ListControls): SafeHtml {
  const f = problem?.fields ?? {};
  const searchable = o.fields.some((field) => field.type === 'text' || field.type === 'long_text');
  const extra = html`${o.stages.length ? selectField({ name: 'stage', label: 'Stage', value: filters.stage, error: f.stage, options: stageOptions(o), blank: 'All stages', markOptional: false }) : ''}
  ${dueFieldOf(o) ? checkbox({ name: 'overdue', value: 'true', label: 'Overdue only', checked: filters.overdue, error: f.overdue }) : ''}
  ${listControls(controls, Object.entries(f).map(([field, message]) => ({ field, message })), recordSorts(o))}`;
  return searchForm({
    action: recordsPath(o.slug),
    label: `Search ${o.name}`,
    q: filters.q,
    error: f.q,
    hint: searchable ? 'Part of any text field.' : 'This object has no text fields to search.',
    extra,
    active: Boolean(filters.stage || filters.overdue || controls.sort || controls.from || controls.to),
    submit: 'Filter',
  });
}

/** The columns of the table: the title, up to three more short fields, the stage and the due date. */
function columns(o: CustomObject): Field[] {
  const title = titleField(o);
  const due = dueFieldOf(o);
  return o.fields.filter((f) => f !== title && f !== due && f.type !== 'long_text').slice(0, 3);
}

export function recordsTable(o: CustomObject, records: readonly RecordView[], opts: { timeZone: string; today: string; relations: RelationContext }): SafeHtml {
  const shown = columns(o);
  const due = dueFieldOf(o);
  const stageLabels = new Map(o.stages.map((s) => [s.key, s.label]));
  const rows = records.map((r) => {
    const dueDay = due && typeof r[due.key] === 'string' ? String(r[due.key]).slice(0, 10) : undefined;
    return html`<tr>
  <td><a href="${recordsPath(o.slug)}/${r.id}">${recordTitle(o, r)}</a></td>
  ${shown.map((f) => html`<td>${displayValue(f, own(r, f.key), opts.timeZone, opts.relations) ?? ''}</td>`)}
  ${o.stages.length ? html`<td>${r.stage ? badge(stageLabels.get(r.stage) ?? r.stage) : ''}</td>` : ''}
  ${due ? html`<td>${dueDay ? html`${dayOnly(dueDay)}${dueDay < opts.today ? html` ${badge('Overdue', 'warn')}` : ''}` : ''}</td>` : ''}
  <td>${dayTag(r.createdAt, opts.timeZone)}</td>
</tr>`;
  });
  const head = [titleField(o)?.label ?? 'Record', ...shown.map((f) => f.label), ...(o.stages.length ? ['Stage'] : []), ...(due ? [due.label] : []), 'Created'];
  return dataTable(o.name, head, rows, `No ${o.name} records match.`);
}

export function recordsPager(o: CustomObject, filters: RecordFilters, pagination: Pagination, controls: ListControls): SafeHtml | '' {
  return pager(recordsPath(o.slug), { q: filters.q || undefined, stage: filters.stage || undefined, overdue: filters.overdue ? 'true' : undefined, ...listControlsParams(controls) }, pagination);
}

/** `opts.remove`: the page's Delete button, last in the row of actions. */
export function recordDetail(o: CustomObject, r: RecordView, opts: { history: ConsoleTimeline; timeZone: string; isAdmin: boolean; relations: RelationContext; pointing: readonly PointingRecords[]; remove?: SafeHtml }): SafeHtml {
  const stage = o.stages.find((s) => s.key === r.stage);
  return html`<div class="button-row"><a class="button button--primary" href="${recordsPath(o.slug)}/${r.id}/edit">Edit record</a>${opts.isAdmin ? html` <a class="button button--secondary" href="${definitionPath(o.slug)}">Definition of ${o.name}</a>` : ''}${opts.remove ?? ''}</div>
<dl class="details">
  ${o.fields.map((f) => detailRow(f.label, displayValue(f, own(r, f.key), opts.timeZone, opts.relations)))}
  ${o.stages.length ? detailRow('Stage', stage?.label ?? r.stage) : ''}
  ${detailRow('Created', timeTag(r.createdAt, opts.timeZone))}
  ${detailRow('Updated', timeTag(r.updatedAt, opts.timeZone))}
  ${detailRow('Id', html`<code>${r.id}</code>`)}
</dl>
${pointingPanel(opts.pointing, opts.timeZone)}
${historyPanel(opts.history, opts.timeZone)}`;
}

/** Records listed per relation field under "Related records" on an item's page. */
export const RELATED_LIMIT = 10;

/**
 * "Related records" on an item's page: per relation field that targets the item's kind, the newest records
 * pointing at it (the reverse lookup), each linked; nothing when none does.
 */
export function pointingPanel(groups: readonly PointingRecords[], timeZone: string): SafeHtml | '' {
  if (groups.length === 0) return '';
  const tables = groups.map((g) => {
    const caption = `${g.object.name} by ${g.field.label}`;
    const rows = g.records.map((r) => html`<tr><td><a href="${recordsPath(g.object.slug)}/${r.id}">${recordTitle(g.object, r)}</a></td><td>${dayTag(r.createdAt, timeZone)}</td></tr>`);
    const more = g.total > g.records.length ? html`<p class="muted">The newest ${g.records.length} of ${g.total}.</p>` : '';
    return html`${dataTable(caption, [g.object.name, 'Created'], rows, '')}${more}`;
  });
  return html`<section class="panel" aria-labelledby="related-records"><h2 id="related-records">Related records</h2>
${tables}
</section>`;
}
