import type { FastifyReply, FastifyRequest } from 'fastify';
import { listErasures, eraseSubject } from '../../modules/privacy/privacy.service.js';
import { ErasureBody, type Erasure } from '../../modules/privacy/privacy.schemas.js';
import { button, checkbox, csrfField, dataTable, errorSummary, textField } from '../components.js';
import { timeTag } from '../format.js';
import { plural } from '../../lib/plural.js';
import { checkedBody, defined, formBody, orUndefined, problemOf, queryText, text, type FormProblem } from '../forms.js';
import { html, type SafeHtml } from '../html.js';
import { viewerOf, type AdminDeps, type AdminModule } from '../module.js';

const PATH = '/admin/config/privacy';
const LABELS = { email: 'E-mail', phoneNumber: 'Phone', reason: 'Reason', confirm: 'Confirmation' };

const matched = (e: Erasure) => `${plural(e.matched.leads, 'lead')}, ${plural(e.matched.accounts, 'account')}, ${plural(e.matched.deals, 'deal')}, ${plural(e.matched.records, 'record')}`;

function receipt(e: Erasure, timeZone: string): SafeHtml {
  return html`<section class="panel" aria-labelledby="receipt"><h2 id="receipt">Erasure receipt</h2>
<dl class="details"><dt>Erasure id</dt><dd><code>${e.id}</code></dd><dt>Status</dt><dd>${e.status}</dd><dt>Removed for good</dt><dd>${matched(e)}</dd>
<dt>Requested</dt><dd>${timeTag(e.requestedAt, timeZone)}</dd><dt>Completed</dt><dd>${timeTag(e.completedAt, timeZone)}</dd><dt>Reason</dt><dd>${e.reason ?? '—'}</dd></dl>
<p class="muted">The receipt keeps no e-mail or phone, only a keyed fingerprint of it. Keep the request itself in your ticketing system until the backups made before today have expired (docs/privacy.md).</p></section>`;
}

function form(request: FastifyRequest, values: Record<string, string>, problem: FormProblem | undefined): SafeHtml {
  const f = problem?.fields ?? {};
  return html`<section class="panel" aria-labelledby="erase"><h2 id="erase">Erase a person</h2>
${errorSummary(problem, LABELS)}
<form method="post" action="${PATH}" class="form" novalidate>
  ${csrfField(request)}
  ${textField({ name: 'email', label: LABELS.email, value: values.email, error: f.email, type: 'email', autocomplete: 'off', maxLength: 254 })}
  ${textField({ name: 'phoneNumber', label: LABELS.phoneNumber, value: values.phoneNumber, error: f.phoneNumber, type: 'tel', autocomplete: 'off', maxLength: 40, hint: 'International format with the country code. Give the e-mail, the phone, or both.' })}
  ${textField({ name: 'reason', label: LABELS.reason, value: values.reason, error: f.reason, maxLength: 500, hint: 'A ticket reference. Kept with the receipt: put no personal data here.' })}
  ${checkbox({ name: 'confirm', label: 'I understand that every lead, account, deal and record holding this e-mail or phone, and their history, is removed for good and cannot be restored.', checked: false, error: f.confirm, errorName: LABELS.confirm })}
  ${button('Erase for good', 'danger')}
</form></section>`;
}

async function renderPage(deps: AdminDeps, request: FastifyRequest, reply: FastifyReply, opts: { values?: Record<string, string>; problem?: FormProblem; status?: number } = {}) {
  const viewer = viewerOf(request);
  const { erasures } = await listErasures(deps.ctx, viewer.organization.id, { page: 1, limit: 50 });
  const tz = viewer.organization.timezone;
  const shown = erasures.find((e) => e.id === queryText(request, 'erasure'));
  const table = dataTable(
    'Past erasures (newest first)',
    ['Completed', 'Removed', 'Reason', 'Id'],
    erasures.map((e) => html`<tr><td>${timeTag(e.completedAt, tz)}</td><td>${matched(e)}</td><td>${e.reason ?? '—'}</td><td><code>${e.id}</code></td></tr>`),
    'No erasures yet.',
  );
  return deps.render(request, reply, {
    title: 'Privacy',
    crumbs: ['Configuration'],
    status: opts.status,
    notice: shown ? 'Erasure completed.' : undefined,
    body: html`<p>Answer a data subject's erasure request (GDPR Art. 17): everything held about an e-mail or phone number is removed in one step, trashed items included. The API also exports it first (<code>GET /privacy/subject</code>).</p>
${shown ? receipt(shown, tz) : ''}
${viewer.user.isAdmin ? form(request, opts.values ?? {}, opts.problem) : html`<p class="muted">Only administrators can erase.</p>`}
${table}`,
  });
}

/** Configuration › Privacy: the erasure form (with a confirmation), its receipt, and the past erasures. */
export const privacyModule: AdminModule = {
  name: 'privacy',
  nav: [{ section: 'configuration', label: 'Privacy', href: PATH, order: 35, description: 'Erase a person for good, and the receipts of past erasures.' }],
  register(app, deps) {
    app.get('/config/privacy', async (request, reply) => renderPage(deps, request, reply));

    app.post('/config/privacy', { config: { console: { access: 'admin' } } }, async (request, reply) => {
      const body = formBody(request);
      const values = { email: text(body, 'email'), phoneNumber: text(body, 'phoneNumber'), reason: text(body, 'reason') };
      const viewer = viewerOf(request);
      try {
        if (text(body, 'confirm') !== 'on') return renderPage(deps, request, reply, { values, problem: { fields: { confirm: 'must be ticked to erase' } }, status: 400 });
        const input = checkedBody<ErasureBody>(ErasureBody, defined({ email: orUndefined(values.email.trim()), phoneNumber: orUndefined(values.phoneNumber.trim()), reason: orUndefined(values.reason.trim()) }));
        const erasure = await eraseSubject(deps.ctx, { organizationId: viewer.organization.id, actor: { type: 'USER', id: viewer.user.id, channel: 'UI' } }, input);
        return reply.redirect(`${PATH}?erasure=${erasure.id}`, 303);
      } catch (err) {
        return renderPage(deps, request, reply, { values, problem: problemOf(err), status: 400 });
      }
    });
  },
};
