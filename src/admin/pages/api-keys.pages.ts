import type { FastifyReply, FastifyRequest } from 'fastify';
import { validationFailed } from '../../errors.js';
import { addDays, parseDateOnly, zonedDateTimeToUtc } from '../../lib/dates.js';
import { listKeys, type ApiKeyRecord } from '../../modules/orgs/keys.store.js';
import { listUsers } from '../../modules/orgs/users.store.js';
import { createApiKey, revokeApiKey } from '../../modules/orgs/orgs.service.js';
import { SCOPES } from '../../modules/orgs/principal.js';
import { actionForm, badge, button, checkboxGroup, csrfField, dataTable, errorSummary, secretOnce, textField } from '../components.js';
import { dayTag, timeTag } from '../format.js';
import { formBody, list, problemOf, queryText, text, type FormProblem } from '../forms.js';
import { html } from '../html.js';
import { viewerOf, type AdminDeps, type AdminModule, type Viewer } from '../module.js';

const PATH = '/admin/config/api-keys';
const ADMIN = { console: { access: 'admin' as const } };
const LABELS = { name: 'Name', scopes: 'Scopes', expiresOn: 'Expires on' };

interface KeyForm {
  name: string;
  scopes: string[];
  expiresOn: string;
}

/** `inactive`: the ids of the organization's deactivated users, whose keys answer 401 (users-deactivation). */
function status(k: ApiKeyRecord, now: Date, inactive: ReadonlySet<string>) {
  if (k.revokedAt) return badge('Revoked', 'bad');
  if (k.expiresAt && new Date(k.expiresAt) <= now) return badge('Expired', 'warn');
  if (k.userId !== null && inactive.has(k.userId)) return badge('Owner deactivated', 'bad');
  return badge('Active', 'good');
}

function keyRows(request: FastifyRequest, viewer: Viewer, keys: ApiKeyRecord[], now: Date, inactive: ReadonlySet<string>) {
  const tz = viewer.organization.timezone;
  return keys.map((k) => {
    const live = !k.revokedAt && !(k.expiresAt && new Date(k.expiresAt) <= now);
    return html`<tr>
  <td>${k.name}<span class="subline">Created ${dayTag(k.createdAt, tz)}</span></td>
  <td><code>${k.prefix}…</code></td>
  <td><ul class="tags">${k.scopes.map((s) => html`<li>${s}</li>`)}</ul></td>
  <td>${timeTag(k.lastUsedAt, tz, 'Never')}</td>
  <td>${timeTag(k.expiresAt, tz, 'Never')}</td>
  <td>${status(k, now, inactive)}</td>
  ${viewer.user.isAdmin ? html`<td>${live ? actionForm(request, `${PATH}/${k.id}/revoke`, 'Revoke', { variant: 'danger', confirm: `Revoke the key “${k.name}”? Requests with it will fail at once.`, accessibleName: `Revoke key ${k.name} (${k.prefix}…)` }) : ''}</td>` : ''}
</tr>`;
  });
}

function createForm(request: FastifyRequest, form: KeyForm, problem?: FormProblem) {
  const f = problem?.fields ?? {};
  return html`<section class="panel" aria-labelledby="new-key"><h2 id="new-key">Create an API key</h2>
${errorSummary(problem, LABELS)}
<form method="post" action="${PATH}" class="form" novalidate>
  ${csrfField(request)}
  ${textField({ name: 'name', label: LABELS.name, value: form.name, error: f.name, hint: 'Shown in listings, e.g. the integration that uses it.', maxLength: 100 })}
  ${checkboxGroup({ name: 'scopes', label: LABELS.scopes, error: f.scopes, hint: 'What the key may do. Write does not imply read.', options: SCOPES.map((s) => ({ value: s, label: s })), checked: new Set(form.scopes) })}
  ${textField({ name: 'expiresOn', label: LABELS.expiresOn, type: 'date', value: form.expiresOn, error: f.expiresOn, hint: 'The key works until the end of this day in the organization’s time zone. Leave empty for no expiry.' })}
  ${button('Create key')}
</form></section>`;
}

async function renderPage(deps: AdminDeps, request: FastifyRequest, reply: FastifyReply, opts: { form?: KeyForm; problem?: FormProblem; created?: string; status?: number } = {}) {
  const viewer = viewerOf(request);
  const now = deps.ctx.clock.now();
  const [keys, users] = await Promise.all([listKeys(deps.ctx.database.db, viewer.organization.id), listUsers(deps.ctx.database.db, viewer.organization.id)]);
  const inactive = new Set(users.filter((u) => u.deactivatedAt !== null).map((u) => u.id));
  const head = ['Name', 'Prefix', 'Scopes', 'Last used', 'Expires', 'Status', ...(viewer.user.isAdmin ? ['Action'] : [])];
  return deps.render(request, reply, {
    title: 'API keys',
    crumbs: ['Configuration'],
    status: opts.status,
    notice: queryText(request, 'notice') === 'revoked' ? 'The key was revoked. Requests using it now fail with 401.' : undefined,
    body: html`${opts.created ? secretOnce('Your new API key', opts.created, 'Copy it now and store it safely: it will not be shown again. Send it as Authorization: Bearer <key>.') : ''}
<p>Keys authenticate calls to the public API. Only a hash of each key is stored.</p>
${dataTable('API keys', head, keyRows(request, viewer, keys, now, inactive), 'No API keys yet.')}
${viewer.user.isAdmin ? createForm(request, opts.form ?? { name: '', scopes: [], expiresOn: '' }, opts.problem) : html`<p class="muted">Only administrators can create or revoke keys.</p>`}`,
  });
}

/** The last instant of `day` in the organization's zone, i.e. the start of the next day there. */
function endOfDay(value: string, timeZone: string): string | null {
  if (value.trim() === '') return null;
  const day = parseDateOnly(value.trim());
  if (!day.ok || day.value !== value.trim()) throw validationFailed([{ field: 'expiresOn', code: 'invalid_format', message: 'must be a date (YYYY-MM-DD)' }]);
  return zonedDateTimeToUtc(addDays(day.value, 1), 0, 0, timeZone).toISOString();
}

/** Configuration › API keys: list, create (the key is shown once), revoke. */
export const apiKeysModule: AdminModule = {
  name: 'api-keys',
  nav: [{ section: 'configuration', label: 'API keys', href: PATH, order: 10, description: 'Keys for the public API: scopes, expiry, last use; create and revoke.' }],
  register(app, deps) {
    app.get('/config/api-keys', async (request, reply) => renderPage(deps, request, reply));

    app.post('/config/api-keys', { config: ADMIN }, async (request, reply) => {
      const viewer = viewerOf(request);
      const body = formBody(request);
      const form: KeyForm = { name: text(body, 'name'), scopes: list(body, 'scopes'), expiresOn: text(body, 'expiresOn') };
      try {
        const created = await createApiKey(deps.ctx, {
          organizationId: viewer.organization.id,
          userId: viewer.user.id,
          name: form.name,
          scopes: form.scopes,
          expiresAt: endOfDay(form.expiresOn, viewer.organization.timezone),
        });
        return renderPage(deps, request, reply, { created: created.key, status: 201 });
      } catch (err) {
        const problem = problemOf(err, { fieldOf: (f) => (f === 'expiresAt' ? 'expiresOn' : f) });
        return renderPage(deps, request, reply, { form, problem, status: 400 });
      }
    });

    app.post<{ Params: { id: string } }>('/config/api-keys/:id/revoke', { config: ADMIN }, async (request, reply) => {
      await revokeApiKey(deps.ctx, request.params.id, viewerOf(request).organization.id);
      return reply.redirect(`${PATH}?notice=revoked`, 303);
    });
  },
};
