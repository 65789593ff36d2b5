import { LEAD_STATUSES } from '../../modules/leads/leads.schemas.js';
import { listLeads } from '../../modules/leads/leads.service.js';
import { listKeys } from '../../modules/orgs/keys.store.js';
import type { Actor } from '../../modules/orgs/principal.js';
import { listUsers } from '../../modules/orgs/users.store.js';
import { badge, dataTable } from '../components.js';
import { humanize, timeTag } from '../format.js';
import { plural } from '../../lib/plural.js';
import { queryText } from '../forms.js';
import { html } from '../html.js';
import { viewerOf, type AdminModule } from '../module.js';
import { listRecentEvents } from './activity.store.js';
import { countActiveKeys, countLeadsByStatus } from './dashboard.store.js';

const NOTICES: Record<string, string> = { welcome: 'Welcome! Your administrator account is ready.' };

function actorLabel(actor: Actor, users: Map<string, string>, keys: Map<string, string>): string {
  if (actor.type === 'USER') return `${users.get(actor.id) ?? 'A user'} (console)`;
  if (actor.type === 'API_KEY') return `API key “${keys.get(actor.id) ?? actor.id}”`;
  return 'System';
}

/** The landing page: lead totals, the newest leads and what changed lately. Every query is bounded. */
export const dashboardModule: AdminModule = {
  name: 'dashboard',
  nav: [],
  register(app, deps) {
    const { ctx } = deps;
    app.get('/', async (request, reply) => {
      const viewer = viewerOf(request);
      const org = viewer.organization.id;
      const db = ctx.database.db;
      const [byStatus, recent, activeKeys, users, keys, events] = await Promise.all([
        countLeadsByStatus(db, org, LEAD_STATUSES),
        listLeads(ctx, org, { page: 1, limit: 5 }),
        countActiveKeys(db, org, ctx.clock.now().toISOString()),
        listUsers(db, org),
        listKeys(db, org),
        listRecentEvents(db, org, { limit: 8 }),
      ]);
      const total = [...byStatus.values()].reduce((a, b) => a + b, 0);
      const userNames = new Map(users.map((u) => [u.id, u.name]));
      const keyNames = new Map(keys.map((k) => [k.id, k.name]));
      const tz = viewer.organization.timezone;

      const stats = html`<ul class="stats">
  <li><a href="/admin/data/leads"><span class="stat-value">${total.toLocaleString('en-US')}</span> <span class="stat-label">Leads</span></a></li>
  <li><a href="/admin/config/api-keys"><span class="stat-value">${activeKeys}</span> <span class="stat-label">Active API keys</span></a></li>
  <li><a href="/admin/config/users"><span class="stat-value">${users.length}</span> <span class="stat-label">Users</span></a></li>
</ul>`;
      const statusRows = LEAD_STATUSES.map((s) => {
        const n = byStatus.get(s) ?? 0;
        return html`<li><span class="status-name">${humanize(s)}</span><meter min="0" max="${Math.max(total, 1)}" value="${n}" aria-label="${humanize(s)}: ${plural(n, 'lead')}"></meter><span class="status-count">${n.toLocaleString('en-US')}</span></li>`;
      });
      const leadRows = recent.leads.map(
        (l) => html`<tr><td><a href="/admin/data/leads/${l.id}">${l.name}</a></td><td>${l.company ?? ''}</td><td>${badge(humanize(l.status))}</td><td>${timeTag(l.createdAt, tz)}</td></tr>`,
      );
      const activity = events.map((e) => {
        const target = deps.objectHref(e.data.object, e.data.id, e.data.objectSlug);
        const what = target ? html`<a href="${target}">${e.data.description}</a>` : e.data.description;
        return html`<li><span class="activity-what">${what}</span> <span class="muted">by ${actorLabel(e.data.actor, userNames, keyNames)} · ${timeTag(e.createdAt, tz)}</span></li>`;
      });

      return deps.render(request, reply, {
        title: 'Dashboard',
        notice: NOTICES[queryText(request, 'notice')],
        body: html`${stats}
<div class="grid-2">
  <section class="panel" aria-labelledby="by-status"><h2 id="by-status">Leads by status</h2><ul class="status-bars">${statusRows}</ul></section>
  <section class="panel" aria-labelledby="activity"><h2 id="activity">Recent activity</h2>${
    activity.length ? html`<ul class="activity">${activity}</ul>` : html`<p class="empty">Nothing has happened yet.</p>`
  }</section>
</div>
<section class="panel" aria-labelledby="newest"><h2 id="newest">Newest leads</h2>
${dataTable('Newest leads', ['Name', 'Company', 'Status', 'Created'], leadRows, 'No leads yet.')}
<p><a href="/admin/data/leads">All leads</a></p></section>`,
      });
    });
  },
};
