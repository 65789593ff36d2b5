import type { FastifyReply, FastifyRequest } from 'fastify';
import { listTimeZones } from '../../lib/dates.js';
import { requireOrganization } from '../../modules/orgs/orgs.service.js';
import { updateOrganizationSettings } from '../../modules/orgs/settings.service.js';
import { button, csrfField, errorSummary, textField } from '../components.js';
import { formBody, problemOf, queryText, text, type FormProblem } from '../forms.js';
import { html, type SafeHtml } from '../html.js';
import { viewerOf, type AdminDeps, type AdminModule } from '../module.js';

const PATH = '/admin/config/settings';
const LABELS = { name: 'Organization name', timezone: 'Time zone' };

/** The zone list is the same for the life of the process: rendered once. */
let zoneOptions: SafeHtml | undefined;
const zones = () => (zoneOptions ??= html`<datalist id="time-zones">${listTimeZones().map((z) => html`<option value="${z}"></option>`)}</datalist>`);

async function renderPage(deps: AdminDeps, request: FastifyRequest, reply: FastifyReply, opts: { values?: { name: string; timezone: string }; problem?: FormProblem; status?: number } = {}) {
  const viewer = viewerOf(request);
  const org = await requireOrganization(deps.ctx, viewer.organization.id);
  const values = opts.values ?? { name: org.name, timezone: org.timezone };
  const f = opts.problem?.fields ?? {};
  const body = viewer.user.isAdmin
    ? html`${errorSummary(opts.problem, LABELS)}
<form method="post" action="${PATH}" class="form" novalidate>
  ${csrfField(request)}
  ${textField({ name: 'name', label: LABELS.name, value: values.name, error: f.name, required: true, maxLength: 200 })}
  ${textField({ name: 'timezone', label: LABELS.timezone, value: values.timezone, error: f.timezone, required: true, list: 'time-zones', autocomplete: 'off', hint: 'An IANA time zone such as Europe/Paris; type to search. Due dates, overdue checks and reminders use it.' })}
  ${zones()}
  ${button('Save settings')}
</form>`
    : html`<dl class="details"><dt>${LABELS.name}</dt><dd>${org.name}</dd><dt>${LABELS.timezone}</dt><dd>${org.timezone}</dd></dl>
<p class="muted">Only administrators can change these settings.</p>`;
  return deps.render(request, reply, {
    title: 'Organization settings',
    crumbs: ['Configuration'],
    status: opts.status,
    notice: queryText(request, 'notice') === 'saved' ? 'Settings saved.' : undefined,
    body: html`<p class="muted">Organization id: <code>${org.id}</code></p>${body}`,
  });
}

/** Configuration › Organization settings: name and time zone. */
export const settingsModule: AdminModule = {
  name: 'settings',
  nav: [{ section: 'configuration', label: 'Organization settings', href: PATH, order: 30, description: 'Name and time zone.' }],
  register(app, deps) {
    app.get('/config/settings', async (request, reply) => renderPage(deps, request, reply));

    app.post('/config/settings', { config: { console: { access: 'admin' } } }, async (request, reply) => {
      const body = formBody(request);
      const values = { name: text(body, 'name'), timezone: text(body, 'timezone') };
      try {
        await updateOrganizationSettings(deps.ctx, viewerOf(request).organization.id, values);
        return reply.redirect(`${PATH}?notice=saved`, 303);
      } catch (err) {
        return renderPage(deps, request, reply, { values, problem: problemOf(err), status: 400 });
      }
    });
  },
};
