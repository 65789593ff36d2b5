import type { FastifyRequest } from 'fastify';
import type { Pagination } from '../../lib/pagination.js';
import type { Account } from '../../modules/accounts/accounts.schemas.js';
import type { Deal } from '../../modules/deals/deals.schemas.js';
import type { Lead } from '../../modules/leads/leads.schemas.js';
import type { PointingRecords } from '../../modules/objects/related-records.js';
import { button, csrfField, dataTable, errorSummary, pager, searchForm, selectField, textField } from '../components.js';
import { dayTag, humanize, money, timeTag } from '../format.js';
import type { FormProblem } from '../forms.js';
import { html, type SafeHtml } from '../html.js';
import { detailRow, historyPanel, type ConsoleTimeline, ownerName, type Person } from './detail.views.js';
import { listControlsParams, type ListControls } from '../list-controls.js';
import { LEADS_PATH } from './leads.views.js';
import { pointingPanel } from './records.views.js';
import { customCells, customHeadings, customInputs, customRows, withCustomLabels, type CustomForm, type CustomShown } from './custom-fields.views.js';
import { versionField } from './edit-version.js';

export const ACCOUNTS_PATH = '/admin/data/accounts';

/** The account form's inputs, named as the API's fields so its validation messages land next to them. */
export const ACCOUNT_LABELS = {
  name: 'Name',
  domain: 'Domain',
  email: 'E-mail',
  phoneNumber: 'Phone number',
  industry: 'Industry',
  website: 'Website',
  ownerId: 'Owner',
} as const;
export type AccountFormValues = Record<keyof typeof ACCOUNT_LABELS, string>;

export const emptyAccountForm = (): AccountFormValues => ({ name: '', domain: '', email: '', phoneNumber: '', industry: '', website: '', ownerId: '' });

export function accountFormValues(a: Account): AccountFormValues {
  return {
    name: a.name,
    domain: a.domain ?? '',
    email: a.email ?? '',
    phoneNumber: a.phoneNumber ?? '',
    industry: a.industry ?? '',
    website: a.website ?? '',
    ownerId: a.ownerId ?? '',
  };
}

export function accountForm(
  request: FastifyRequest,
  opts: { action: string; values: AccountFormValues; problem?: FormProblem | undefined; users: Person[]; creating: boolean; custom: CustomForm; version?: string | undefined },
): SafeHtml {
  const f = opts.problem?.fields ?? {};
  const v = opts.values;
  const L = ACCOUNT_LABELS;
  return html`${errorSummary(opts.problem, withCustomLabels(L, opts.custom.fields))}
<form method="post" action="${opts.action}" class="form form--grid" novalidate>
  ${csrfField(request)}${versionField(opts.version)}
  ${textField({ name: 'name', label: L.name, value: v.name, error: f.name, required: true, maxLength: 200, autocomplete: 'off' })}
  ${textField({ name: 'domain', label: L.domain, value: v.domain, error: f.domain, hint: 'The primary web domain, e.g. example.com.', autocomplete: 'off' })}
  ${textField({ name: 'email', label: L.email, type: 'email', value: v.email, error: f.email, autocomplete: 'off' })}
  ${textField({ name: 'phoneNumber', label: L.phoneNumber, type: 'tel', value: v.phoneNumber, error: f.phoneNumber, hint: 'International format with the country code, e.g. +14155550100.', autocomplete: 'off' })}
  ${textField({ name: 'industry', label: L.industry, value: v.industry, error: f.industry, maxLength: 200 })}
  ${textField({ name: 'website', label: L.website, type: 'url', value: v.website, error: f.website, hint: 'An absolute http or https address.', autocomplete: 'off' })}
  ${selectField({ name: 'ownerId', label: L.ownerId, value: v.ownerId, error: f.ownerId, options: opts.users.map((u) => ({ value: u.id, label: u.name })), blank: 'Unassigned' })}
  ${customInputs(opts.custom, f)}
  <div class="form-actions">${button(opts.creating ? 'Create account' : 'Save changes')} <a href="${opts.creating ? ACCOUNTS_PATH : opts.action}">Cancel</a></div>
</form>`;
}

/** One column per custom account field after the standard ones. */
export function accountsTable(accounts: Account[], people: ReadonlyMap<string, string>, timeZone: string, custom: CustomShown): SafeHtml {
  const rows = accounts.map(
    (a) => html`<tr>
  <td><a href="${ACCOUNTS_PATH}/${a.id}">${a.name}</a></td>
  <td>${a.domain ?? ''}</td>
  <td>${a.industry ?? ''}</td>
  <td>${a.email ?? ''}</td>
  <td>${a.phoneNumber ?? ''}</td>
  <td>${ownerName(people, a.ownerId)}</td>
  <td>${dayTag(a.createdAt, timeZone)}</td>
  ${customCells(custom, a, timeZone)}
</tr>`,
  );
  return dataTable('Accounts', ['Name', 'Domain', 'Industry', 'E-mail', 'Phone', 'Owner', 'Created', ...customHeadings(custom.fields)], rows, 'No accounts match.');
}

export function accountSearchForm(q: string, error: string | undefined, extra?: SafeHtml, controls?: ListControls): SafeHtml {
  const active = Boolean(controls && (controls.sort || controls.from || controls.to));
  return searchForm({ action: ACCOUNTS_PATH, label: 'Search accounts', q, error, hint: 'An e-mail or a phone number with its country code finds exact matches; anything else searches names.', ...(extra ? { extra } : {}), active });
}

export function accountsPager(q: string, pagination: Pagination, controls?: ListControls): SafeHtml | '' {
  return pager(ACCOUNTS_PATH, { q: q || undefined, ...(controls ? listControlsParams(controls) : {}) }, pagination);
}

export function accountDetail(
  a: Account,
  opts: {
    owner: string | undefined;
    deals: { deals: Deal[]; total: number };
    leads: { leads: Lead[]; total: number };
    pointing: readonly PointingRecords[];
    stageLabels: ReadonlyMap<string, string>;
    history: ConsoleTimeline;
    timeZone: string;
    custom: CustomShown;
    /** The page's Delete button, last in the row of actions. */
    remove?: SafeHtml;
  },
): SafeHtml {
  const L = ACCOUNT_LABELS;
  const website = a.website ? html`<a href="${a.website}" rel="noopener noreferrer">${a.website}</a>` : null;
  const dealRows = opts.deals.deals.map(
    (d) => html`<tr><td><a href="/admin/data/deals/${d.id}">${d.name}</a></td><td>${opts.stageLabels.get(d.stage) ?? d.stage}</td><td class="num">${money(d.amount, d.currency)}</td></tr>`,
  );
  const more = opts.deals.total > opts.deals.deals.length ? html`<p><a href="/admin/data/deals?accountId=${a.id}">All ${opts.deals.total} deals with this account</a></p>` : '';
  const leadRows = opts.leads.leads.map((l) => html`<tr><td><a href="${LEADS_PATH}/${l.id}">${l.name}</a></td><td>${humanize(l.status)}</td><td>${dayTag(l.createdAt, opts.timeZone)}</td></tr>`);
  const moreLeads = opts.leads.total > opts.leads.leads.length ? html`<p class="muted">The newest ${opts.leads.leads.length} of ${opts.leads.total} leads.</p>` : '';
  return html`<div class="button-row"><a class="button button--primary" href="${ACCOUNTS_PATH}/${a.id}/edit">Edit account</a> <a class="button button--secondary" href="/admin/data/deals/new?accountId=${a.id}">New deal</a>${opts.remove ?? ''}</div>
<dl class="details">
  ${detailRow(L.domain, a.domain)}
  ${detailRow(L.email, a.email)}
  ${detailRow(L.phoneNumber, a.phoneNumber)}
  ${detailRow(L.industry, a.industry)}
  ${detailRow(L.website, website)}
  ${detailRow(L.ownerId, a.ownerId ? (opts.owner ?? a.ownerId) : null)}
  ${customRows(opts.custom, a, opts.timeZone)}
  ${detailRow('Created', timeTag(a.createdAt, opts.timeZone))}
  ${detailRow('Updated', timeTag(a.updatedAt, opts.timeZone))}
  ${detailRow('Id', html`<code>${a.id}</code>`)}
</dl>
<section class="panel" aria-labelledby="account-deals"><h2 id="account-deals">Deals</h2>
${dataTable('Deals with this account', ['Name', 'Stage', 'Amount'], dealRows, 'No deals with this account yet.')}${more}
</section>
<section class="panel" aria-labelledby="account-leads"><h2 id="account-leads">Leads</h2>
${dataTable('Leads of this account', ['Name', 'Status', 'Created'], leadRows, 'No leads of this account yet.')}${moreLeads}
</section>
${pointingPanel(opts.pointing, opts.timeZone)}
${historyPanel(opts.history, opts.timeZone)}`;
}
