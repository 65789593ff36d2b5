import type { FastifyRequest } from 'fastify';
import { AppError } from '../../errors.js';
import type { CrmEvent } from '../../modules/events/events.js';
import type { Executor } from '../../db/database.js';
import type { ItemTarget } from '../../modules/shared/item-target.js';
import { ENTRY_TYPES, type TimelineEntry } from '../../modules/timeline/timeline.schemas.js';
import { itemTimeline } from '../../modules/timeline/timeline.service.js';
import { listUsers } from '../../modules/orgs/users.store.js';
import { button, selectField } from '../components.js';
import { dayOnly, timeTag } from '../format.js';
import { queryText } from '../forms.js';
import { html, type SafeHtml } from '../html.js';
import type { AdminDeps } from '../module.js';
import { noteDelete, noteForm, NOTES_PATH } from './notes.views.js';
import { taskActions, TASKS_PATH } from './task-actions.views.js';
import { blankNewTask, newTaskForm } from './task-form.views.js';

/** One term of a record's detail list; an empty value shows a dash. */
export function detailRow(label: string, value: SafeHtml | string | number | null | undefined): SafeHtml {
  return html`<dt>${label}</dt><dd>${value === null || value === undefined || value === '' ? html`<span class="muted">—</span>` : value}</dd>`;
}

const CHANNELS: Record<CrmEvent['data']['actor']['channel'], string> = { UI: 'in the console', API: 'through the API', MCP: 'through MCP', COPILOT: 'by the copilot' };

/**
 * An item's timeline as its console page shows it: the entries, the item and request its forms post for, whom a
 * task can be for, and its Show control: `types` as typed (blank for all), `error` when the timeline refused it
 * (the page then answers 400), `page` the item's page the control reloads.
 */
export interface ConsoleTimeline {
  entries: TimelineEntry[];
  target: ItemTarget;
  request: FastifyRequest;
  assignees: Person[];
  types: string;
  error: string | undefined;
  page: string | undefined;
  /** Where the entries after these start (`?history=`), null on the last of them; `paged` once past the newest. */
  nextCursor: string | null;
  paged: boolean;
}

/** The notice of an item's page after a timeline form added to it (`?notice=taskAdded`). */
export const TIMELINE_NOTICES: Readonly<Record<string, string>> = { taskAdded: 'Task added.' };

/** The Show control's choices: the timeline's entry types, one at a time (blank: all of them). */
const SHOWN: Record<(typeof ENTRY_TYPES)[number], string> = { event: 'Changes', note: 'Notes', task: 'Tasks' };

/**
 * 20 entries of an item's timeline for its console page, the newest or those after `?history=` (the timeline's
 * cursor, as GET …/timeline's `after`): every type (the console reads all three), or those `?types=` asks for,
 * passed to the timeline as `types` is, so it refuses what the API refuses.
 */
export async function consoleTimeline(deps: AdminDeps, request: FastifyRequest, organizationId: string, target: ItemTarget): Promise<ConsoleTimeline> {
  const types = queryText(request, 'types');
  const after = queryText(request, 'history');
  const [shown, assignees] = await Promise.all([shownEntries(deps, organizationId, target, types, after), activePeople(deps.ctx.database.db, organizationId)]);
  return { ...shown, target, request, assignees, types, page: deps.objectHref(target.object, target.id, target.objectSlug), paged: after !== '' };
}

type Shown = Pick<ConsoleTimeline, 'entries' | 'error' | 'nextCursor'>;

async function shownEntries(deps: AdminDeps, organizationId: string, target: ItemTarget, types: string, after: string): Promise<Shown> {
  try {
    const timeline = await itemTimeline(deps.ctx, organizationId, target, ENTRY_TYPES, { limit: 20, ...(types ? { types } : {}), ...(after ? { after } : {}) });
    return { entries: timeline.timeline, error: undefined, nextCursor: timeline.pagination.nextCursor };
  } catch (err) {
    if (err instanceof AppError && err.code === 'VALIDATION_FAILED') return { entries: [], error: err.errors?.[0]?.message ?? err.message, nextCursor: null };
    throw err;
  }
}

/** "Older entries" (the next 20, the same Show choice) and, past the newest, the way back to them. */
function historyPager(history: ConsoleTimeline): SafeHtml | '' {
  if (!history.page || (!history.nextCursor && !history.paged)) return '';
  const query = (more: Record<string, string>) => new URLSearchParams({ ...(history.types ? { types: history.types } : {}), ...more }).toString();
  const at = (more: Record<string, string>) => `${history.page}${query(more) ? `?${query(more)}` : ''}#history`;
  return html`<nav class="pager" aria-label="History pages">${history.paged ? html`<a href="${at({})}">Newest entries</a>` : ''}${history.nextCursor ? html` <a href="${at({ history: history.nextCursor })}" rel="next">Older entries</a>` : ''}</nav>`;
}

/** The Show control, a GET form back to the item's page at its History panel. */
function showForm(history: ConsoleTimeline): SafeHtml | '' {
  if (!history.page) return '';
  const options = ENTRY_TYPES.map((t) => ({ value: t, label: SHOWN[t] }));
  return html`<form method="get" action="${history.page}#history" class="search" role="search" aria-label="Filter history">
  ${selectField({ name: 'types', label: 'Show', value: history.types, error: history.error, options, blank: 'All', markOptional: false })}
  ${button('Show', 'secondary')}
</form>`;
}

function entryLine(request: FastifyRequest, e: TimelineEntry, timeZone: string): SafeHtml {
  if (e.event) {
    const event = e.event as unknown as CrmEvent;
    return html`<span class="activity-what">${event.data.description}</span> <span class="muted">${CHANNELS[event.data.actor.channel]} · ${timeTag(e.at, timeZone)}</span>`;
  }
  if (e.note) return html`<span class="activity-what">Note</span> <span class="muted">${timeTag(e.at, timeZone)}</span><div class="note-body">${e.note.body}</div>
${noteDelete(request, e.note)}`;
  const task = e.task!;
  return html`<span class="activity-what">Task: ${task.title}</span> <span class="muted">${task.status === 'done' ? 'done' : 'open'}${task.dueDate ? html` · due ${dayOnly(task.dueDate)}` : ''} · ${timeTag(e.at, timeZone)}</span>
${taskActions(request, task, 'timeline')}`;
}

/**
 * An item's timeline (newest first): its changes (what, through which channel, when), its notes and its tasks (each
 * with Delete), or only those the Show control chose; a note form, a task form and the way to their Trash pages.
 */
export function historyPanel(history: ConsoleTimeline, timeZone: string): SafeHtml {
  const { entries, request } = history;
  return html`<section class="panel" aria-labelledby="history"><h2 id="history">History</h2>
${noteForm(request, history.target)}
${newTaskForm(request, { target: history.target, assignees: history.assignees, values: blankNewTask(request), legend: 'Add a task' })}
${showForm(history)}
${entries.length ? html`<ul class="activity">${entries.map((e) => html`<li>${entryLine(request, e, timeZone)}</li>`)}</ul>` : history.error ? '' : html`<p class="empty">${history.types ? 'Nothing of this kind yet.' : 'No recorded changes.'}</p>`}
${historyPager(history)}
<p class="muted">Deleted notes and tasks: <a href="${NOTES_PATH}/trash">notes' trash</a>, <a href="${TASKS_PATH}/trash">tasks' trash</a>.</p>
</section>`;
}

export interface Person {
  id: string;
  name: string;
}

/**
 * The organization's users, for owner selects and owner names (an organization has tens of users, not
 * thousands). A deactivated user keeps their name on what they own, marked, and choosing them is refused.
 */
export async function listPeople(db: Executor, organizationId: string): Promise<Person[]> {
  return (await listUsers(db, organizationId)).map((u) => ({ id: u.id, name: u.deactivatedAt === null ? u.name : `${u.name} (deactivated)` }));
}

/** The organization's active users: whom a task can be assigned to (the API refuses a deactivated one). */
export async function activePeople(db: Executor, organizationId: string): Promise<Person[]> {
  return (await listUsers(db, organizationId)).filter((u) => u.deactivatedAt === null).map((u) => ({ id: u.id, name: u.name }));
}

/** An owner cell: the user's name, the raw id if the user is gone, or "Unassigned". */
export function ownerName(people: ReadonlyMap<string, string>, ownerId: string | null): SafeHtml | string {
  return ownerId ? (people.get(ownerId) ?? ownerId) : html`<span class="muted">Unassigned</span>`;
}
