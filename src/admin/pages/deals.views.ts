import type { FastifyRequest } from 'fastify';
import type { Pagination } from '../../lib/pagination.js';
import type { Deal } from '../../modules/deals/deals.schemas.js';
import type { DealStage } from '../../modules/deals/stages.schemas.js';
import type { PointingRecords } from '../../modules/objects/related-records.js';
import { pointingPanel } from './records.views.js';
import { badge, button, csrfField, dataTable, errorSummary, pager, pickerField, searchForm, selectField, textField, type Option } from '../components.js';
import { dayOnly, dayTag, money, timeTag } from '../format.js';
import type { FormProblem } from '../forms.js';
import { href, html, type SafeHtml } from '../html.js';
import { detailRow, historyPanel, type ConsoleTimeline, ownerName, type Person } from './detail.views.js';
import { listControls, listControlsParams, type ListControls } from '../list-controls.js';
import { customCells, customHeadings, customInputs, customRows, withCustomLabels, type CustomForm, type CustomShown } from './custom-fields.views.js';
import { versionField } from './edit-version.js';

export const DEALS_PATH = '/admin/data/deals';
export const BOARD_PATH = '/admin/data/deals/board';

/** The deal form's inputs, named as the API's fields so its validation messages land next to them. */
export const DEAL_LABELS = {
  name: 'Name',
  stage: 'Stage',
  amount: 'Amount',
  currency: 'Currency',
  accountId: 'Account',
  leadId: 'Lead',
  ownerId: 'Owner',
  expectedCloseDate: 'Expected close date',
} as const;
export type DealFormValues = Record<keyof typeof DEAL_LABELS, string>;

export const emptyDealForm = (): DealFormValues => ({ name: '', stage: '', amount: '', currency: '', accountId: '', leadId: '', ownerId: '', expectedCloseDate: '' });

export function dealFormValues(d: Deal): DealFormValues {
  return {
    name: d.name,
    stage: d.stage,
    amount: d.amount ?? '',
    currency: d.currency ?? '',
    accountId: d.accountId ?? '',
    leadId: d.leadId ?? '',
    ownerId: d.ownerId ?? '',
    expectedCloseDate: d.expectedCloseDate?.slice(0, 10) ?? '',
  };
}

/** The filters of the table and the board (same meaning as GET /deals). */
export interface DealFilters {
  q: string;
  stage: string;
  ownerId: string;
  accountId: string;
}

export const stageOptions = (stages: readonly DealStage[]): Option[] => stages.map((s) => ({ value: s.key, label: s.label }));
const personOptions = (people: readonly Person[]): Option[] => people.map((p) => ({ value: p.id, label: p.name }));

/** The currency codes the runtime knows, with their English names; rendered once per process. */
let currencyList: SafeHtml | undefined;
function currencies(): SafeHtml {
  const names = new Intl.DisplayNames(['en'], { type: 'currency' });
  return (currencyList ??= html`<datalist id="currencies">${Intl.supportedValuesOf('currency').map((c) => html`<option value="${c}" label="${names.of(c) ?? c}"></option>`)}</datalist>`);
}

export interface DealFormContext {
  stages: readonly DealStage[];
  people: readonly Person[];
  /** Newest accounts and leads, offered as suggestions; any id of the organization may be typed. */
  accounts: readonly { id: string; name: string }[];
  leads: readonly { id: string; name: string }[];
  /** The names of the account and lead currently in the form, shown under their inputs. */
  accountName?: string | undefined;
  leadName?: string | undefined;
}

export function dealForm(
  request: FastifyRequest,
  opts: { action: string; values: DealFormValues; problem?: FormProblem | undefined; creating: boolean; context: DealFormContext; custom: CustomForm; version?: string | undefined },
): SafeHtml {
  const f = opts.problem?.fields ?? {};
  const v = opts.values;
  const L = DEAL_LABELS;
  const c = opts.context;
  return html`${errorSummary(opts.problem, withCustomLabels(L, opts.custom.fields))}
<form method="post" action="${opts.action}" class="form form--grid" novalidate>
  ${csrfField(request)}${versionField(opts.version)}
  ${textField({ name: 'name', label: L.name, value: v.name, error: f.name, required: true, maxLength: 200, autocomplete: 'off' })}
  ${selectField({ name: 'stage', label: L.stage, value: v.stage, error: f.stage, options: stageOptions(c.stages), required: true })}
  ${textField({ name: 'amount', label: L.amount, value: v.amount, error: f.amount, inputMode: 'decimal', autocomplete: 'off', hint: 'An exact decimal such as 48000.00: up to 15 digits before the point and 4 after.' })}
  ${textField({ name: 'currency', label: L.currency, value: v.currency, error: f.currency, list: 'currencies', maxLength: 3, autocomplete: 'off', hint: 'ISO 4217 code such as EUR or USD; required with an amount.' })}
  ${currencies()}
  ${pickerField({ name: 'accountId', label: L.accountId, value: v.accountId, error: f.accountId, items: c.accounts, currentName: c.accountName, what: 'accounts' })}
  ${pickerField({ name: 'leadId', label: L.leadId, value: v.leadId, error: f.leadId, items: c.leads, currentName: c.leadName, what: 'leads' })}
  ${selectField({ name: 'ownerId', label: L.ownerId, value: v.ownerId, error: f.ownerId, options: personOptions(c.people), blank: 'Unassigned' })}
  ${textField({ name: 'expectedCloseDate', label: L.expectedCloseDate, type: 'date', value: v.expectedCloseDate, error: f.expectedCloseDate, hint: 'A calendar day (YYYY-MM-DD).' })}
  ${customInputs(opts.custom, f)}
  <div class="form-actions">${button(opts.creating ? 'Create deal' : 'Save changes')} <a href="${opts.creating ? DEALS_PATH : opts.action}">Cancel</a></div>
</form>`;
}

/** Links between the table and the board, keeping the filters they share. */
export function viewSwitch(current: 'table' | 'board', filters: DealFilters): SafeHtml {
  const shared = { q: filters.q || undefined, ownerId: filters.ownerId || undefined };
  const link = (view: 'table' | 'board', label: string, path: string) =>
    html`<li><a href="${href(path, view === 'table' ? { ...shared, stage: filters.stage || undefined, accountId: filters.accountId || undefined } : shared)}"${view === current ? html` aria-current="page"` : ''}>${label}</a></li>`;
  return html`<nav class="view-switch" aria-label="Deal views"><ul>${link('table', 'Table', DEALS_PATH)}${link('board', 'Board', BOARD_PATH)}</ul></nav>`;
}

/** The filter form of the table (with its order and creation-day controls) and of the board (without: its columns keep their order). */
export function dealFilterForm(
  action: string,
  filters: DealFilters,
  opts: { stages: readonly DealStage[]; people: readonly Person[]; problem?: FormProblem | undefined; withStage: boolean; accountName?: string | undefined; controls?: ListControls },
): SafeHtml {
  const f = opts.problem?.fields ?? {};
  const extra = html`${opts.withStage ? selectField({ name: 'stage', label: 'Stage', value: filters.stage, error: f.stage, options: stageOptions(opts.stages), blank: 'All stages', markOptional: false }) : ''}
  ${selectField({ name: 'ownerId', label: 'Owner', value: filters.ownerId, error: f.ownerId, options: personOptions(opts.people), blank: 'Anyone', markOptional: false })}
  ${opts.controls ? listControls(opts.controls, Object.entries(f).map(([field, message]) => ({ field, message }))) : ''}
  ${filters.accountId && opts.withStage ? html`<input type="hidden" name="accountId" value="${filters.accountId}"><p class="filter-chip">Account: ${opts.accountName ?? filters.accountId}</p>` : ''}`;
  const c = opts.controls;
  const active = Boolean(filters.stage || filters.ownerId || filters.accountId || (c && (c.sort || c.from || c.to)));
  return searchForm({ action, label: 'Search deals', q: filters.q, error: f.q, hint: 'Part of the deal name.', extra, active, submit: 'Filter' });
}

/** One column per custom deal field after the standard ones. */
export function dealsTable(
  deals: readonly Deal[],
  names: { stages: ReadonlyMap<string, string>; accounts: ReadonlyMap<string, string>; people: ReadonlyMap<string, string> },
  timeZone: string,
  custom: CustomShown,
): SafeHtml {
  const rows = deals.map(
    (d) => html`<tr>
  <td><a href="${DEALS_PATH}/${d.id}">${d.name}</a></td>
  <td>${badge(names.stages.get(d.stage) ?? d.stage)}</td>
  <td class="num">${money(d.amount, d.currency)}</td>
  <td>${d.accountId ? html`<a href="/admin/data/accounts/${d.accountId}">${names.accounts.get(d.accountId) ?? d.accountId}</a>` : ''}</td>
  <td>${ownerName(names.people, d.ownerId)}</td>
  <td>${dayOnly(d.expectedCloseDate, '')}</td>
  <td>${dayTag(d.createdAt, timeZone)}</td>
  ${customCells(custom, d, timeZone)}
</tr>`,
  );
  return dataTable('Deals', ['Name', 'Stage', 'Amount', 'Account', 'Owner', 'Expected close', 'Created', ...customHeadings(custom.fields)], rows, 'No deals match.');
}

export function dealsPager(filters: DealFilters, pagination: Pagination, controls: ListControls): SafeHtml | '' {
  const { q, stage, ownerId, accountId } = filters;
  return pager(DEALS_PATH, { q: q || undefined, stage: stage || undefined, ownerId: ownerId || undefined, accountId: accountId || undefined, ...listControlsParams(controls) }, pagination);
}

/**
 * The form that moves one deal to another stage: a labelled select and a button, posting to
 * `<deal>/stage`; `back` is where to return (the board with its filters, or the deal).
 */
export function moveForm(request: FastifyRequest, deal: Pick<Deal, 'id' | 'name' | 'stage'>, stages: readonly DealStage[], back: string, error?: string): SafeHtml {
  const id = `move-${deal.id}`;
  return html`<form method="post" action="${DEALS_PATH}/${deal.id}/stage" class="move-form">
  ${csrfField(request)}<input type="hidden" name="back" value="${back}">
  <label for="${id}" class="visually-hidden">Move ${deal.name} to</label>
  <select id="${id}" name="stage"${error ? html` aria-invalid="true" aria-describedby="${id}-error"` : ''}>${stages.map((s) => html`<option value="${s.key}"${s.key === deal.stage ? html` selected` : ''}>${s.label}</option>`)}</select>
  ${button('Move', 'secondary', html` aria-label="Move ${deal.name}"`)}
  ${error ? html`<p class="field-error" id="${id}-error"><span class="visually-hidden">Error:</span> Stage ${error}</p>` : ''}
</form>`;
}

export function dealDetail(
  request: FastifyRequest,
  d: Deal,
  opts: {
    stages: readonly DealStage[];
    accountName?: string | undefined;
    leadName?: string | undefined;
    owner?: string | undefined;
    history: ConsoleTimeline;
    pointing: readonly PointingRecords[];
    timeZone: string;
    moveError?: string;
    custom: CustomShown;
    /** The page's Delete button, last in the row of actions. */
    remove?: SafeHtml;
  },
): SafeHtml {
  const L = DEAL_LABELS;
  const stage = opts.stages.find((s) => s.key === d.stage);
  return html`<div class="button-row"><a class="button button--primary" href="${DEALS_PATH}/${d.id}/edit">Edit deal</a> <a class="button button--secondary" href="${BOARD_PATH}">Board</a>${opts.remove ?? ''}</div>
<dl class="details">
  ${detailRow(L.stage, html`${stage?.label ?? d.stage}${stage && stage.kind !== 'open' ? html` ${badge(stage.kind === 'won' ? 'Won' : 'Lost', stage.kind === 'won' ? 'good' : 'bad')}` : ''}`)}
  ${detailRow(L.amount, money(d.amount, d.currency))}
  ${detailRow(L.accountId, d.accountId ? html`<a href="/admin/data/accounts/${d.accountId}">${opts.accountName ?? d.accountId}</a>` : null)}
  ${detailRow(L.leadId, d.leadId ? html`<a href="/admin/data/leads/${d.leadId}">${opts.leadName ?? d.leadId}</a>` : null)}
  ${detailRow(L.ownerId, d.ownerId ? (opts.owner ?? d.ownerId) : null)}
  ${detailRow(L.expectedCloseDate, d.expectedCloseDate ? dayOnly(d.expectedCloseDate) : null)}
  ${customRows(opts.custom, d, opts.timeZone)}
  ${detailRow('Created', timeTag(d.createdAt, opts.timeZone))}
  ${detailRow('Updated', timeTag(d.updatedAt, opts.timeZone))}
  ${detailRow('Id', html`<code>${d.id}</code>`)}
</dl>
<section class="panel" aria-labelledby="move"><h2 id="move">Move to another stage</h2>${moveForm(request, d, opts.stages, `${DEALS_PATH}/${d.id}`, opts.moveError)}</section>
${pointingPanel(opts.pointing, opts.timeZone)}
${historyPanel(opts.history, opts.timeZone)}`;
}
