import type { FastifyRequest } from 'fastify';
import type { Pagination } from '../../lib/pagination.js';
import { EVENT_TYPES } from '../../modules/events/events.js';
import { ALL_EVENTS, DELIVERY_STATUSES, type DeliveryStatus, type DisabledReason, type Webhook, type WebhookDelivery } from '../../modules/webhooks/webhooks.schemas.js';
import { actionForm, badge, button, checkboxGroup, csrfField, dataTable, errorSummary, pager, selectField, textArea, textField } from '../components.js';
import { humanize, timeTag } from '../format.js';
import type { FormProblem } from '../forms.js';
import { html, type SafeHtml } from '../html.js';
import type { LastDelivery } from './webhooks.store.js';
import { versionField } from './edit-version.js';
import { CREATION_CONSOLE_SORTS, listControls, listControlsParams, TIME_CONSOLE_SORTS, type ListControls } from '../list-controls.js';
import type { FieldError } from '../../errors.js';

export const WEBHOOKS_PATH = '/admin/config/webhooks';
export const WEBHOOK_LABELS = { url: 'Endpoint URL', events: 'Events', description: 'Description' };

export interface WebhookForm {
  url: string;
  events: string[];
  description: string;
}

const REASONS: Record<DisabledReason, string> = {
  DISABLED_BY_USER: 'disabled by a user',
  ENDPOINT_GONE: 'the endpoint answered 410 Gone',
  FAILING_FOR_3_DAYS: 'every attempt failed for 3 days',
};

/** Enabled, failing (with since when) or disabled (with why): the three states an operator acts on. */
export function endpointStatus(w: Webhook, timeZone: string): SafeHtml {
  if (!w.enabled) return html`${badge('Disabled', 'bad')}<span class="subline">${w.disabledReason ? humanize(REASONS[w.disabledReason]) : 'Disabled'}</span>`;
  if (w.failingSince) return html`${badge('Failing', 'warn')}<span class="subline">since ${timeTag(w.failingSince, timeZone)}</span>`;
  return badge('Enabled', 'good');
}

const TONES: Record<DeliveryStatus, 'neutral' | 'good' | 'warn' | 'bad'> = { PENDING: 'warn', SENDING: 'neutral', SUCCEEDED: 'good', FAILED: 'bad' };
export const deliveryBadge = (status: DeliveryStatus) => badge(humanize(status), TONES[status]);

const eventList = (events: readonly string[]) =>
  events.includes(ALL_EVENTS) ? html`<span class="muted">All events</span>` : html`<ul class="tags">${events.map((e) => html`<li>${e}</li>`)}</ul>`;

/** The list's own filters, as typed in its address: `enabled` (true, false or blank) and `eventType`. */
export interface EndpointFilters {
  enabled: string;
  eventType: string;
}

/** The event types an endpoint subscribes to (a test event goes to any endpoint, whatever it lists). */
const SUBSCRIBABLE = EVENT_TYPES.filter((t) => t !== 'webhook.test');

const ENABLED_OPTIONS = [{ value: 'true', label: 'Enabled' }, { value: 'false', label: 'Disabled' }];

/** The endpoint list's filter (GET /webhooks' enabled, eventType, sort and creation days); `errors` shown next to the controls. */
export function endpointFilter(f: EndpointFilters, c: ListControls, errors: readonly FieldError[]): SafeHtml {
  const error = (field: string) => errors.find((e) => e.field === field)?.message;
  const filtered = Boolean(f.enabled || f.eventType || c.sort || c.from || c.to);
  return html`<form method="get" action="${WEBHOOKS_PATH}" class="search" role="search" aria-label="Filter endpoints">
  ${selectField({ name: 'enabled', label: 'Enabled', value: f.enabled, error: error('enabled'), options: ENABLED_OPTIONS, blank: 'Any', markOptional: false })}
  ${selectField({ name: 'eventType', label: 'Event type', value: f.eventType, error: error('eventType'), options: SUBSCRIBABLE.map((t) => ({ value: t, label: t })), blank: 'Any event type', markOptional: false })}
  ${listControls(c, [...errors], TIME_CONSOLE_SORTS)}
  ${button('Filter', 'secondary')}
  ${filtered ? html`<a href="${WEBHOOKS_PATH}">Clear</a>` : ''}
</form>`;
}

/** The pager's query parameters for the filter. */
export const endpointFilterParams = (f: EndpointFilters, c: ListControls) => ({ enabled: f.enabled || undefined, eventType: f.eventType || undefined, ...listControlsParams(c) });

export function webhooksTable(webhooks: readonly Webhook[], last: ReadonlyMap<string, LastDelivery>, timeZone: string, filtered: boolean): SafeHtml {
  const rows = webhooks.map((w) => {
    const d = last.get(w.id);
    return html`<tr>
  <td><a href="${WEBHOOKS_PATH}/${w.id}" class="url-cell">${w.url}</a>${w.description ? html`<span class="subline">${w.description}</span>` : ''}</td>
  <td>${eventList(w.events)}</td>
  <td>${endpointStatus(w, timeZone)}</td>
  <td>${d ? html`${deliveryBadge(d.status)} <code>${d.eventType}</code><span class="subline">${timeTag(d.updatedAt, timeZone)}</span>` : html`<span class="muted">None yet</span>`}</td>
</tr>`;
  });
  return dataTable('Webhook endpoints', ['Endpoint', 'Events', 'Status', 'Last delivery'], rows, filtered ? 'No endpoints match.' : 'No endpoints yet: add one to receive events as they happen.');
}

/** The add or edit form; an edit form carries the `version` (ETag) of the endpoint it shows, which the save is conditional on. */
export function webhookForm(request: FastifyRequest, opts: { action: string; form: WebhookForm; problem?: FormProblem | undefined; submit: string; cancel: string; version?: string | undefined }): SafeHtml {
  const f = opts.problem?.fields ?? {};
  const options = [{ value: ALL_EVENTS, label: 'All events (also types added later)' }, ...EVENT_TYPES.filter((t) => t !== 'webhook.test').map((t) => ({ value: t, label: t }))];
  return html`${errorSummary(opts.problem, WEBHOOK_LABELS)}
<form method="post" action="${opts.action}" class="form form--wide" novalidate>
  ${csrfField(request)}${versionField(opts.version)}
  ${textField({ name: 'url', label: WEBHOOK_LABELS.url, type: 'url', value: opts.form.url, error: f.url, required: true, autocomplete: 'off', hint: 'An https address on the public internet; we POST each event there as JSON, signed.' })}
  ${checkboxGroup({ name: 'events', label: WEBHOOK_LABELS.events, error: f.events, hint: 'Choose the event types to receive, or all of them.', options, checked: new Set(opts.form.events) })}
  ${textArea({ name: 'description', label: WEBHOOK_LABELS.description, value: opts.form.description, error: f.description, rows: 2, hint: 'Shown in the list, e.g. what receives these events.' })}
  <div class="form-actions">${button(opts.submit)} <a href="${opts.cancel}">Cancel</a></div>
</form>`;
}

/** What a new endpoint receives, shown under its secret. */
export function endpointSummary(w: Webhook): SafeHtml {
  return html`<dl class="details"><dt>${WEBHOOK_LABELS.url}</dt><dd><code>${w.url}</code></dd><dt>${WEBHOOK_LABELS.events}</dt><dd>${eventList(w.events)}</dd><dt>${WEBHOOK_LABELS.description}</dt><dd>${w.description ?? html`<span class="muted">—</span>`}</dd></dl>`;
}

/** The endpoint's settings and the buttons that act on it (administrators only). */
export function endpointPanel(request: FastifyRequest, w: Webhook, opts: { timeZone: string; isAdmin: boolean }): SafeHtml {
  const base = `${WEBHOOKS_PATH}/${w.id}`;
  const actions = opts.isAdmin
    ? html`<div class="button-row endpoint-actions">
  ${w.enabled ? actionForm(request, `${base}/test`, 'Send test event', { variant: 'secondary' }) : ''}
  ${w.enabled ? actionForm(request, `${base}/disable`, 'Disable', { variant: 'secondary', confirm: 'Disable this endpoint? Queued retries are cancelled.' }) : actionForm(request, `${base}/enable`, 'Enable', { variant: 'secondary' })}
  ${actionForm(request, `${base}/rotate`, 'Rotate secret', { variant: 'secondary', confirm: 'Create a new signing secret? The current one keeps signing for 24 hours.' })}
  <a class="button button--secondary" href="${base}/edit">Edit</a>
  <a class="button button--danger" href="${base}/delete">Delete</a>
</div>`
    : html`<p class="muted">Only administrators can change endpoints, send tests or re-send deliveries.</p>`;
  return html`<dl class="details">
  <dt>Status</dt><dd>${endpointStatus(w, opts.timeZone)}</dd>
  <dt>Events</dt><dd>${eventList(w.events)}</dd>
  <dt>Description</dt><dd>${w.description ?? html`<span class="muted">—</span>`}</dd>
  <dt>Signing secret</dt><dd>${w.previousSecretExpiresAt ? html`Rotated: the previous secret also signs until ${timeTag(w.previousSecretExpiresAt, opts.timeZone)}.` : html`<span class="muted">Shown only when created or rotated.</span>`}</dd>
  <dt>Created</dt><dd>${timeTag(w.createdAt, opts.timeZone)}</dd>
  <dt>Id</dt><dd><code>${w.id}</code></dd>
</dl>
${actions}`;
}

function responseCell(d: WebhookDelivery): SafeHtml {
  const status = d.responseStatus !== null ? html`<code>${d.responseStatus}</code>` : '';
  const excerpt = d.responseExcerpt ?? d.error;
  if (!excerpt) return status || html`<span class="muted">—</span>`;
  const short = excerpt.length > 60 ? `${excerpt.slice(0, 60)}…` : excerpt;
  return html`${status} <span class="excerpt">${short}</span>${excerpt.length > 60 ? html`<details><summary>Full answer</summary><pre class="code">${excerpt}</pre></details>` : ''}`;
}

/**
 * The delivery log with its filter: status, order and creation days (list-controls.ts). `log` is the page, or
 * undefined when a control was refused (`errors`, shown next to it, and no table).
 */
export function deliveryLog(
  request: FastifyRequest,
  w: Webhook,
  log: { deliveries: readonly WebhookDelivery[]; pagination: Pagination } | undefined,
  opts: { timeZone: string; isAdmin: boolean; status: string; controls: ListControls; errors: readonly FieldError[] },
): SafeHtml {
  const base = `${WEBHOOKS_PATH}/${w.id}`;
  const rows = (log?.deliveries ?? []).map(
    (d) => html`<tr>
  <td><code>${d.eventType}</code><span class="subline"><code>${d.eventId}</code></span></td>
  <td>${deliveryBadge(d.status)}<span class="subline">Attempt ${d.attempt}</span></td>
  <td class="num">${d.durationMs === null ? '' : `${d.durationMs} ms`}</td>
  <td class="response">${responseCell(d)}</td>
  <td>${d.nextAttemptAt ? timeTag(d.nextAttemptAt, opts.timeZone) : html`<span class="muted">—</span>`}</td>
  <td>${timeTag(d.createdAt, opts.timeZone)}</td>
  ${opts.isAdmin ? html`<td>${w.enabled && d.status !== 'SENDING' ? actionForm(request, `${base}/deliveries/${d.id}/resend`, 'Resend', { accessibleName: `Resend ${d.eventType} ${d.eventId}` }) : ''}</td>` : ''}
</tr>`,
  );
  const head = ['Event', 'Status', 'Duration', 'Response', 'Next attempt', 'Created', ...(opts.isAdmin ? ['Action'] : [])];
  const c = opts.controls;
  const filtered = Boolean(opts.status || c.sort || c.from || c.to);
  const filter = html`<form method="get" action="${base}" class="search" role="search" aria-label="Filter deliveries">
  ${selectField({ name: 'status', label: 'Status', value: opts.status, error: opts.errors.find((e) => e.field === 'status')?.message, options: DELIVERY_STATUSES.map((s) => ({ value: s, label: humanize(s) })), blank: 'Any status', markOptional: false })}
  ${listControls(c, [...opts.errors], CREATION_CONSOLE_SORTS)}
  ${button('Filter', 'secondary')}
  ${filtered ? html`<a href="${base}">Clear</a>` : ''}
</form>`;
  return html`<section class="panel" aria-labelledby="log"><h2 id="log">Delivery log</h2>
<p class="muted">Every event sent to this endpoint in the last 30 days, with its latest attempt; newest first unless you choose another order.</p>
${filter}
${log ? html`${dataTable('Deliveries', head, rows, 'No deliveries match.')}
${pager(base, { status: opts.status || undefined, ...listControlsParams(c) }, log.pagination)}` : ''}
</section>`;
}
