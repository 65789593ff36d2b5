import type { AppContext } from '../../context.js';
import { AppError, notFound, validationFailed, type FieldError } from '../../errors.js';
import { timeRangeOf } from '../../lib/list-request.js';
import { type ListCursors } from '../../lib/list-cursor.js';
import { listCursors } from '../../crypto/list-cursors.js';
import { toStoredNote } from '../notes/notes.store.js';
import { toNote } from '../notes/notes.service.js';
import type { Principal, Scope } from '../orgs/principal.js';
import type { ItemTarget } from '../shared/item-target.js';
import { isLiveItem } from '../shared/item-target.store.js';
import { toStoredTask } from '../tasks/tasks.store.js';
import { toTask } from '../tasks/tasks.service.js';
import { ENTRY_TYPES, type EntryType, type TimelineEntry, type TimelineQuery } from './timeline.schemas.js';
import { RANK_OF, sourcePage, type SourceRow, type TimelinePosition } from './timeline.store.js';

type Ctx = Pick<AppContext, 'database' | 'cipher' | 'cursorSeal'>;
const SORT = 'timeline';
const RANKS = 3;

/* A position travels in the shared list cursor: `value` the instant, `seq` the source's seq and rank together. */
const encode = (cursors: ListCursors, p: TimelinePosition) => cursors.seal({ sort: SORT, value: p.at, seq: p.seq * RANKS + p.rank });
function decode(cursors: ListCursors, cursor: string, errors: FieldError[]): TimelinePosition | null {
  const p = cursors.open(cursor, SORT);
  if (p && typeof p.value === 'string') return { at: p.value, rank: p.seq % RANKS, seq: Math.floor(p.seq / RANKS) };
  errors.push({ field: 'after', code: 'invalid_cursor', message: 'must be a nextCursor returned by a timeline (one handed out before a server upgrade may no longer open: start again without after)' });
  return null;
}

/** Newest first: later instant, then higher rank, then higher seq. */
const newerFirst = (a: SourceRow, b: SourceRow) => b.at.localeCompare(a.at) || RANK_OF[b.type] - RANK_OF[a.type] || b.seq - a.seq;

/** The scope a source needs besides the item's own (events come with the item). */
const SOURCE_SCOPES = { event: null, note: 'notes:read', task: 'tasks:read' } as const satisfies Record<EntryType, Scope | null>;

/**
 * Which sources a key sees on an item it can read: the item's events always; notes with notes:read; tasks
 * with tasks:read (a key that may read leads but not notes gets a lead's timeline without its notes).
 */
export function timelineSources(principal: Principal): EntryType[] {
  const scopes = principal.key.scopes;
  return ['event', ...(scopes.includes(SOURCE_SCOPES.note) ? ['note' as const] : []), ...(scopes.includes(SOURCE_SCOPES.task) ? ['task' as const] : [])];
}


function present(ctx: Ctx, r: SourceRow): TimelineEntry {
  if (r.type === 'event') return { type: 'event', at: r.at, event: JSON.parse(String(r.row.payload)) as Record<string, unknown> };
  if (r.type === 'note') return { type: 'note', at: r.at, note: toNote(ctx, toStoredNote(r.row as never)) };
  return { type: 'task', at: r.at, task: toTask(toStoredTask(r.row as never)) };
}

/** The entry types `types` asks for (a comma-separated subset of event, note, task), or `errors` naming it. */
function askedTypes(types: string, errors: FieldError[]): EntryType[] {
  // `note, task` (a space after the comma) and a trailing comma ask for what they name, as the feed's types.
  const asked = [...new Set(types.split(',').map((t) => t.trim()).filter((t) => t !== ''))];
  const unknown = asked.filter((t) => !(ENTRY_TYPES as readonly string[]).includes(t));
  if (asked.length === 0) errors.push({ field: 'types', code: 'invalid_value', message: 'names no entry type: list them comma-separated (types=note,task), or leave types out for every type' });
  else if (unknown.length > 0) errors.push({ field: 'types', code: 'invalid_value', message: `Unknown entry type ${unknown.join(', ')}; one of ${ENTRY_TYPES.join(', ')}` });
  return asked as EntryType[];
}

/**
 * The live item's entries among the `readable` sources (those still retained, for events), newest first, narrowed
 * by the query's `types` and `createdAfter`/`createdBefore` on `at`. Each source reads at most one page past the
 * cursor from its index, so a page costs the same at any depth. The cursor holds a position only, as a list's
 * does: with other filters it continues from that position under them.
 */
export async function itemTimeline(ctx: Ctx, organizationId: string, target: ItemTarget, readable: readonly EntryType[], query: TimelineQuery) {
  const cursors = listCursors(ctx, organizationId);
  const errors: FieldError[] = [];
  const after = query.after === undefined ? null : decode(cursors, query.after, errors);
  const asked = query.types === undefined ? readable : askedTypes(query.types, errors);
  const { createdAfter, createdBefore } = timeRangeOf({ createdAfter: query.createdAfter, createdBefore: query.createdBefore }, errors);
  if (errors.length) throw validationFailed(errors);
  const hidden = asked.filter((t) => !readable.includes(t));
  if (hidden.length > 0) throw new AppError('INSUFFICIENT_SCOPE', `Reading a timeline's ${hidden.map((t) => `${t}s`).join(' and ')} needs the scope ${hidden.map((t) => SOURCE_SCOPES[t]).join(', ')}`);
  const limit = query.limit ?? 25;
  const db = ctx.database.db;
  if (!(await isLiveItem(db, organizationId, target))) throw notFound(target.object[0]!.toUpperCase() + target.object.slice(1));
  const range = { ...(createdAfter !== undefined && { createdAfter }), ...(createdBefore !== undefined && { createdBefore }) };
  const pages = await Promise.all(asked.map((type) => sourcePage(db, type, organizationId, target.id, { after, range }, limit + 1)));
  const merged = pages.flat().sort(newerFirst);
  const shown = merged.slice(0, limit);
  const last = shown.at(-1);
  const nextCursor = merged.length > limit && last ? encode(cursors, { at: last.at, rank: RANK_OF[last.type], seq: last.seq }) : null;
  return { timeline: shown.map((r) => present(ctx, r)), pagination: { limit, nextCursor } };
}

/** GET …/{id}/timeline: the item's timeline with the sources the key may read. */
export function readTimeline(ctx: Ctx, principal: Principal, target: ItemTarget, query: TimelineQuery) {
  return itemTimeline(ctx, principal.organization.id, target, timelineSources(principal), query);
}
