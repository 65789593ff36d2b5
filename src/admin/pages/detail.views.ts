import type { CrmEvent } from '../../modules/events/events.js';
import type { Executor } from '../../db/database.js';
import { listUsers } from '../../modules/orgs/users.store.js';
import { timeTag } from '../format.js';
import { html, type SafeHtml } from '../html.js';

/** One term of a record's detail list; an empty value shows a dash. */
export function detailRow(label: string, value: SafeHtml | string | number | null | undefined): SafeHtml {
  return html`<dt>${label}</dt><dd>${value === null || value === undefined || value === '' ? html`<span class="muted">—</span>` : value}</dd>`;
}

const CHANNELS: Record<CrmEvent['data']['actor']['channel'], string> = { UI: 'in the console', API: 'through the API', MCP: 'through MCP', COPILOT: 'by the copilot' };

/** A record's history from the event log (newest first): what changed, through which channel, when. */
export function historyPanel(history: readonly CrmEvent[], timeZone: string): SafeHtml {
  return html`<section class="panel" aria-labelledby="history"><h2 id="history">History</h2>
${history.length ? html`<ul class="activity">${history.map((e) => html`<li><span class="activity-what">${e.data.description}</span> <span class="muted">${CHANNELS[e.data.actor.channel]} · ${timeTag(e.createdAt, timeZone)}</span></li>`)}</ul>` : html`<p class="empty">No recorded changes.</p>`}
</section>`;
}

export interface Person {
  id: string;
  name: string;
}

/** The organization's users, for owner selects and owner names (an organization has tens of users, not thousands). */
export async function listPeople(db: Executor, organizationId: string): Promise<Person[]> {
  return (await listUsers(db, organizationId)).map((u) => ({ id: u.id, name: u.name }));
}

/** An owner cell: the user's name, the raw id if the user is gone, or "Unassigned". */
export function ownerName(people: ReadonlyMap<string, string>, ownerId: string | null): SafeHtml | string {
  return ownerId ? (people.get(ownerId) ?? ownerId) : html`<span class="muted">Unassigned</span>`;
}
