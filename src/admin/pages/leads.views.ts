import type { FastifyRequest } from 'fastify';
import type { Pagination } from '../../lib/pagination.js';
import { LEAD_STATUSES, type Lead } from '../../modules/leads/leads.schemas.js';
import { LEAD_SOURCES } from '../../modules/orgs/rules.schemas.js';
import { badge, button, csrfField, dataTable, errorSummary, pager, pickerField, searchForm, selectField, textArea, textField, type PickerItem } from '../components.js';
import { dayTag, humanize, money, timeTag } from '../format.js';
import type { Deal } from '../../modules/deals/deals.schemas.js';
import type { PointingRecords } from '../../modules/objects/related-records.js';
import { pointingPanel } from './records.views.js';
import type { FormProblem } from '../forms.js';
import { html, type SafeHtml } from '../html.js';
import { listControlsParams, type ListControls } from '../list-controls.js';
import { detailRow, historyPanel, type ConsoleTimeline } from './detail.views.js';
import { customCells, customHeadings, customInputs, customRows, withCustomLabels, type CustomForm, type CustomShown } from './custom-fields.views.js';
import { versionField } from './edit-version.js';

export const LEADS_PATH = '/admin/data/leads';

/** The lead form's inputs, named as the API's fields so its validation messages land next to them. */
export const LEAD_LABELS = {
  name: 'Name',
  email: 'E-mail',
  phoneNumber: 'Phone number',
  company: 'Company',
  title: 'Job title',
  status: 'Status',
  source: 'Source',
  sourceCampaign: 'Campaign',
  ownerId: 'Owner',
  accountId: 'Account',
  notes: 'Notes',
} as const;
export type LeadFormValues = Record<keyof typeof LEAD_LABELS, string>;

export const emptyLeadForm = (): LeadFormValues => ({
  name: '', email: '', phoneNumber: '', company: '', title: '', status: 'NEW', source: '', sourceCampaign: '', ownerId: '', accountId: '', notes: '',
});

export function leadFormValues(lead: Lead): LeadFormValues {
  return {
    name: lead.name,
    email: lead.email ?? '',
    phoneNumber: lead.phoneNumber ?? '',
    company: lead.company ?? '',
    title: lead.title ?? '',
    status: lead.status,
    source: lead.source ?? '',
    sourceCampaign: lead.sourceCampaign ?? '',
    ownerId: lead.ownerId ?? '',
    accountId: lead.accountId ?? '',
    notes: lead.notes ?? '',
  };
}

const options = (values: readonly string[]) => values.map((v) => ({ value: v, label: humanize(v) }));

export function leadForm(
  request: FastifyRequest,
  opts: {
    action: string;
    values: LeadFormValues;
    problem?: FormProblem | undefined;
    users: { id: string; name: string }[];
    /** The newest accounts, offered by the account picker, and the name of the one in the form. */
    accounts: readonly PickerItem[];
    accountName: string | undefined;
    creating: boolean;
    custom: CustomForm;
    /** An edit form's: the version (ETag) of the lead it shows, which the save is conditional on. */
    version?: string | undefined;
  },
): SafeHtml {
  const f = opts.problem?.fields ?? {};
  const v = opts.values;
  const L = LEAD_LABELS;
  return html`${errorSummary(opts.problem, withCustomLabels(L, opts.custom.fields))}
<form method="post" action="${opts.action}" class="form form--grid" novalidate>
  ${csrfField(request)}${versionField(opts.version)}
  ${textField({ name: 'name', label: L.name, value: v.name, error: f.name, required: true, maxLength: 200, autocomplete: 'off' })}
  ${textField({ name: 'email', label: L.email, type: 'email', value: v.email, error: f.email, autocomplete: 'off' })}
  ${textField({ name: 'phoneNumber', label: L.phoneNumber, type: 'tel', value: v.phoneNumber, error: f.phoneNumber, hint: 'International format with the country code, e.g. +14155550100.', autocomplete: 'off' })}
  ${textField({ name: 'company', label: L.company, value: v.company, error: f.company, maxLength: 200 })}
  ${textField({ name: 'title', label: L.title, value: v.title, error: f.title, maxLength: 200 })}
  ${selectField({ name: 'status', label: L.status, value: v.status, error: f.status, options: options(LEAD_STATUSES), required: true })}
  ${selectField({ name: 'source', label: L.source, value: v.source, error: f.source, options: options(LEAD_SOURCES), blank: 'Not set' })}
  ${textField({ name: 'sourceCampaign', label: L.sourceCampaign, value: v.sourceCampaign, error: f.sourceCampaign, maxLength: 200 })}
  ${selectField({ name: 'ownerId', label: L.ownerId, value: v.ownerId, error: f.ownerId, options: opts.users.map((u) => ({ value: u.id, label: u.name })), blank: opts.creating ? 'Set by assignment rules' : 'Unassigned' })}
  ${pickerField({ name: 'accountId', label: L.accountId, value: v.accountId, error: f.accountId, items: opts.accounts, currentName: opts.accountName, what: 'accounts' })}
  ${textArea({ name: 'notes', label: L.notes, value: v.notes, error: f.notes, rows: 5 })}
  ${customInputs(opts.custom, f)}
  <div class="form-actions">${button(opts.creating ? 'Create lead' : 'Save changes')} <a href="${opts.creating ? LEADS_PATH : opts.action}">Cancel</a></div>
</form>`;
}

/** One column per custom lead field after the standard ones. */
export function leadsTable(leads: Lead[], owners: Map<string, string>, timeZone: string, custom: CustomShown): SafeHtml {
  const rows = leads.map(
    (l) => html`<tr>
  <td><a href="${LEADS_PATH}/${l.id}">${l.name}</a></td>
  <td>${l.company ?? ''}</td>
  <td>${l.email ?? ''}</td>
  <td>${l.phoneNumber ?? ''}</td>
  <td>${badge(humanize(l.status))}</td>
  <td>${l.ownerId ? (owners.get(l.ownerId) ?? l.ownerId) : html`<span class="muted">Unassigned</span>`}</td>
  <td>${dayTag(l.createdAt, timeZone)}</td>
  ${customCells(custom, l, timeZone)}
</tr>`,
  );
  return dataTable('Leads', ['Name', 'Company', 'E-mail', 'Phone', 'Status', 'Owner', 'Created', ...customHeadings(custom.fields)], rows, 'No leads match.');
}

export function leadSearchForm(q: string, error: string | undefined, extra?: SafeHtml, controls?: ListControls): SafeHtml {
  const active = Boolean(controls && (controls.sort || controls.from || controls.to));
  return searchForm({ action: LEADS_PATH, label: 'Search leads', q, error, hint: 'An e-mail or a phone number with its country code finds exact matches; anything else searches names.', ...(extra ? { extra } : {}), active });
}

export function leadsPager(q: string, pagination: Pagination, controls?: ListControls): SafeHtml | '' {
  return pager(LEADS_PATH, { q: q || undefined, ...(controls ? listControlsParams(controls) : {}) }, pagination);
}

export interface LeadRelated {
  accountName: string | undefined;
  deals: { deals: Deal[]; total: number };
  stageLabels: ReadonlyMap<string, string>;
  pointing: readonly PointingRecords[];
}

/** `remove`: the page's Delete button, last in the row of actions. */
export function leadDetail(lead: Lead, owner: string | undefined, duplicateName: string | undefined, history: ConsoleTimeline, timeZone: string, related: LeadRelated, custom: CustomShown, remove: SafeHtml | '' = ''): SafeHtml {
  const row = detailRow;
  const dealRows = related.deals.deals.map(
    (d) => html`<tr><td><a href="/admin/data/deals/${d.id}">${d.name}</a></td><td>${related.stageLabels.get(d.stage) ?? d.stage}</td><td class="num">${money(d.amount, d.currency)}</td></tr>`,
  );
  const moreDeals = related.deals.total > related.deals.deals.length ? html`<p class="muted">The newest ${related.deals.deals.length} of ${related.deals.total} deals.</p>` : '';
  return html`<div class="button-row"><a class="button button--primary" href="${LEADS_PATH}/${lead.id}/edit">Edit lead</a>${remove}</div>
<dl class="details">
  ${row(LEAD_LABELS.email, lead.email)}
  ${row(LEAD_LABELS.phoneNumber, lead.phoneNumber)}
  ${row(LEAD_LABELS.company, lead.company)}
  ${row(LEAD_LABELS.title, lead.title)}
  ${row(LEAD_LABELS.status, humanize(lead.status))}
  ${row(LEAD_LABELS.source, lead.source && humanize(lead.source))}
  ${row(LEAD_LABELS.sourceCampaign, lead.sourceCampaign)}
  ${row(LEAD_LABELS.ownerId, lead.ownerId ? (owner ?? lead.ownerId) : null)}
  ${row(LEAD_LABELS.accountId, lead.accountId ? html`<a href="/admin/data/accounts/${lead.accountId}">${related.accountName ?? lead.accountId}</a>` : null)}
  ${row('Duplicate of', lead.duplicateOf ? html`<a href="${LEADS_PATH}/${lead.duplicateOf}">${duplicateName ?? lead.duplicateOf}</a>` : null)}
  ${row(LEAD_LABELS.notes, lead.notes)}
  ${customRows(custom, lead, timeZone)}
  ${row('Created', timeTag(lead.createdAt, timeZone))}
  ${row('Updated', timeTag(lead.updatedAt, timeZone))}
  ${row('Id', html`<code>${lead.id}</code>`)}
</dl>
<section class="panel" aria-labelledby="lead-deals"><h2 id="lead-deals">Deals</h2>
${dataTable('Deals from this lead', ['Name', 'Stage', 'Amount'], dealRows, 'No deals from this lead yet.')}${moreDeals}
</section>
${pointingPanel(related.pointing, timeZone)}
${historyPanel(history, timeZone)}`;
}
