import type { FastifyReply, FastifyRequest } from 'fastify';
import { listErasures, eraseSubject } from '../../modules/privacy/privacy.service.js';
import { ErasureBody, ListErasuresQuery, SubjectEnvelope, SubjectQuery, type Erasure } from '../../modules/privacy/privacy.schemas.js';
import type { FieldError } from '../../errors.js';
import { validateValue } from '../../http/validation.js';
import type { Pagination } from '../../lib/pagination.js';
import { CREATION_CONSOLE_SORTS, listControls, listControlsOf, listControlsParams, listControlsQuery, rangeErrors, type ListControls } from '../list-controls.js';
import { exportSubject } from '../../modules/privacy/subject-export.js';
import { ok } from '../../http/schemas.js';
import { localDate } from '../../lib/dates.js';
import { own } from '../../lib/own.js';
import { button, checkbox, csrfField, dataTable, errorSummary, pager, textField } from '../components.js';
import { timeTag } from '../format.js';
import { plural } from '../../lib/plural.js';
import { checkedBody, defined, formBody, orUndefined, problemOf, queryPage, queryText, text, type FormProblem } from '../forms.js';
import { html, type SafeHtml } from '../html.js';
import { viewerOf, type AdminDeps, type AdminModule } from '../module.js';

const PATH = '/admin/config/privacy';
const EXPORT_PATH = `${PATH}/export`;
const LABELS = { email: 'E-mail', phoneNumber: 'Phone', reason: 'Reason', confirm: 'Confirmation' };
/** What the past erasures' table calls a receipt's creation time. */
const COMPLETED = 'Completed';
const ERASURE_INPUTS = { email: 'email', phoneNumber: 'phoneNumber' };
/** The export form's inputs are named apart from the erasure form's, so that the two forms on the page never share an id. */
const EXPORT_INPUTS = { email: 'exportEmail', phoneNumber: 'exportPhoneNumber' };
const EXPORT_LABELS = { [EXPORT_INPUTS.email]: LABELS.email, [EXPORT_INPUTS.phoneNumber]: LABELS.phoneNumber };

interface FormState {
  values?: Record<string, string>;
  problem?: FormProblem;
}

const matched = (e: Erasure) => `${plural(e.matched.leads, 'lead')}, ${plural(e.matched.accounts, 'account')}, ${plural(e.matched.deals, 'deal')}, ${plural(e.matched.records, 'record')}`;

function receipt(e: Erasure, timeZone: string): SafeHtml {
  return html`<section class="panel" aria-labelledby="receipt"><h2 id="receipt">Erasure receipt</h2>
<dl class="details"><dt>Erasure id</dt><dd><code>${e.id}</code></dd><dt>Status</dt><dd>${e.status}</dd><dt>Removed for good</dt><dd>${matched(e)}</dd>
<dt>Requested</dt><dd>${timeTag(e.requestedAt, timeZone)}</dd><dt>Completed</dt><dd>${timeTag(e.completedAt, timeZone)}</dd><dt>Reason</dt><dd>${e.reason ?? '—'}</dd></dl>
<p class="muted">The receipt keeps no e-mail or phone, only a keyed fingerprint of it. Keep the request itself in your ticketing system until the backups made before today have expired (docs/privacy.md).</p></section>`;
}

/** The e-mail and phone inputs both forms ask for, under the form's own input names. */
function contactFields(names: { email: string; phoneNumber: string }, { values = {}, problem }: FormState): SafeHtml {
  const f = problem?.fields ?? {};
  return html`${textField({ name: names.email, label: LABELS.email, value: values[names.email], error: f[names.email], type: 'email', autocomplete: 'off', maxLength: 254 })}
  ${textField({ name: names.phoneNumber, label: LABELS.phoneNumber, value: values[names.phoneNumber], error: f[names.phoneNumber], type: 'tel', autocomplete: 'off', maxLength: 40, hint: 'International format with the country code. Give the e-mail, the phone, or both.' })}`;
}

// POST, not GET: the e-mail or phone stays out of the address, the browser's history and any proxy's access log.
function exportForm(request: FastifyRequest, state: FormState): SafeHtml {
  return html`<section class="panel" aria-labelledby="export"><h2 id="export">Export a person's data</h2>
<p>Downloads the access-request file (GDPR Art. 15/20) as JSON: every lead, account, deal and record holding the e-mail or phone, trashed ones included, decrypted, with their notes, tasks and the events naming them. The console keeps no copy.</p>
${errorSummary(state.problem, EXPORT_LABELS)}
<form method="post" action="${EXPORT_PATH}" class="form" novalidate>
  ${csrfField(request)}
  ${contactFields(EXPORT_INPUTS, state)}
  ${button('Download export')}
</form></section>`;
}

function erasureForm(request: FastifyRequest, state: FormState): SafeHtml {
  const values = state.values ?? {};
  const f = state.problem?.fields ?? {};
  return html`<section class="panel" aria-labelledby="erase"><h2 id="erase">Erase a person</h2>
${errorSummary(state.problem, LABELS)}
<form method="post" action="${PATH}" class="form" novalidate>
  ${csrfField(request)}
  ${contactFields(ERASURE_INPUTS, state)}
  ${textField({ name: 'reason', label: LABELS.reason, value: values.reason, error: f.reason, maxLength: 500, hint: 'A ticket reference. Kept with the receipt: put no personal data here.' })}
  ${checkbox({ name: 'confirm', label: 'I understand that every lead, account, deal and record holding this e-mail or phone, and their history, is removed for good and cannot be restored.', checked: false, error: f.confirm, errorName: LABELS.confirm })}
  ${button('Erase for good', 'danger')}
</form></section>`;
}

/**
 * The past erasures with their order and completion days (list-controls.ts: a receipt is created as its erasure
 * completes), 50 a page; no table while a control is refused (shown next to it).
 */
function pastErasures(controls: ListControls, errors: readonly FieldError[], page: { erasures: readonly Erasure[]; pagination: Pagination } | undefined, timeZone: string): SafeHtml {
  const filtered = Boolean(controls.sort || controls.from || controls.to);
  const table = page
    ? html`${dataTable(
        'Past erasures',
        ['Completed', 'Removed', 'Reason', 'Id'],
        page.erasures.map((e) => html`<tr><td>${timeTag(e.completedAt, timeZone)}</td><td>${matched(e)}</td><td>${e.reason ?? '—'}</td><td><code>${e.id}</code></td></tr>`),
        filtered ? 'No erasures match.' : 'No erasures yet.',
      )}${pager(PATH, listControlsParams(controls), page.pagination)}`
    : '';
  return html`<section class="panel" aria-labelledby="past"><h2 id="past">Past erasures</h2>
<form method="get" action="${PATH}" class="search" role="search" aria-label="Filter past erasures">
  ${listControls(controls, [...errors], CREATION_CONSOLE_SORTS, COMPLETED)}
  ${button('Filter', 'secondary')}
  ${filtered ? html`<a href="${PATH}">Clear</a>` : ''}
</form>
${table}</section>`;
}

async function renderPage(deps: AdminDeps, request: FastifyRequest, reply: FastifyReply, opts: { exporting?: FormState; erasing?: FormState; status?: number } = {}) {
  const viewer = viewerOf(request);
  const controls = listControlsOf(request);
  const query = { ...listControlsQuery(controls), page: queryPage(request), limit: 50 };
  const errors = [...validateValue(ListErasuresQuery, query, 'query'), ...rangeErrors(controls, COMPLETED)];
  const page = errors.length ? undefined : await listErasures(deps.ctx, viewer.organization.id, query as ListErasuresQuery);
  const tz = viewer.organization.timezone;
  const shown = page?.erasures.find((e) => e.id === queryText(request, 'erasure'));
  return deps.render(request, reply, {
    title: 'Privacy',
    crumbs: ['Configuration'],
    status: opts.status ?? (errors.length ? 400 : undefined),
    notice: shown ? 'Erasure completed.' : undefined,
    body: html`<p>Answer a data subject's requests about an e-mail or phone number: access (GDPR Art. 15/20), with a download of everything held about it, and erasure (Art. 17), which removes all of it in one step, trashed items included. The API does both too (<code>GET /privacy/subject</code>, <code>POST /privacy/erasures</code>).</p>
${shown ? receipt(shown, tz) : ''}
${viewer.user.isAdmin ? html`${exportForm(request, opts.exporting ?? {})}
${erasureForm(request, opts.erasing ?? {})}` : html`<p class="muted">Only administrators can export or erase a person's data.</p>`}
${pastErasures(controls, errors, page, tz)}`,
  });
}

/** Configuration › Privacy: the export (a JSON download), the erasure form (with a confirmation), its receipt, and the past erasures. */
export const privacyModule: AdminModule = {
  name: 'privacy',
  nav: [{ section: 'configuration', label: 'Privacy', href: PATH, order: 35, description: "Export or erase a person's data, and the receipts of past erasures." }],
  register(app, deps) {
    app.get('/config/privacy', async (request, reply) => renderPage(deps, request, reply));

    app.post('/config/privacy', { config: { console: { access: 'admin' } } }, async (request, reply) => {
      const body = formBody(request);
      const values = { email: text(body, 'email'), phoneNumber: text(body, 'phoneNumber'), reason: text(body, 'reason') };
      const viewer = viewerOf(request);
      try {
        if (text(body, 'confirm') !== 'on') return renderPage(deps, request, reply, { erasing: { values, problem: { fields: { confirm: 'must be ticked to erase' } } }, status: 400 });
        const input = checkedBody<ErasureBody>(ErasureBody, defined({ email: orUndefined(values.email.trim()), phoneNumber: orUndefined(values.phoneNumber.trim()), reason: orUndefined(values.reason.trim()) }));
        const erasure = await eraseSubject(deps.ctx, { organizationId: viewer.organization.id, actor: { type: 'USER', id: viewer.user.id, channel: 'UI' } }, input);
        return reply.redirect(`${PATH}?erasure=${erasure.id}`, 303);
      } catch (err) {
        return renderPage(deps, request, reply, { erasing: { values, problem: problemOf(err) }, status: 400 });
      }
    });

    // The same file as the API's GET /privacy/subject, serialized by the same response schema, as a download
    // (no-store, like every console answer). Its name holds the day only: never the e-mail or phone.
    app.post('/config/privacy/export', { config: { console: { access: 'admin' } }, schema: { response: { 200: SubjectEnvelope } } }, async (request, reply) => {
      const body = formBody(request);
      const email = text(body, EXPORT_INPUTS.email);
      const phoneNumber = text(body, EXPORT_INPUTS.phoneNumber);
      const values = { [EXPORT_INPUTS.email]: email, [EXPORT_INPUTS.phoneNumber]: phoneNumber };
      const viewer = viewerOf(request);
      try {
        const query = checkedBody<SubjectQuery>(SubjectQuery, defined({ email: orUndefined(email.trim()), phoneNumber: orUndefined(phoneNumber.trim()) }));
        const file = await exportSubject(deps.ctx, viewer.organization.id, query);
        const day = localDate(deps.ctx.clock.now(), viewer.organization.timezone);
        return reply.type('application/json').header('content-disposition', `attachment; filename="subject-export-${day}.json"`).send(ok(file));
      } catch (err) {
        return renderPage(deps, request, reply, { exporting: { values, problem: problemOf(err, { fieldOf: (field) => own(EXPORT_INPUTS, field) ?? field }) }, status: 400 });
      }
    });
  },
};
