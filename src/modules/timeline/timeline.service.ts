import type { AppContext } from '../../context.js';
import { notFound, validationFailed } from '../../errors.js';
import { type ListCursors } from '../../lib/list-cursor.js';
import { listCursors } from '../../crypto/list-cursors.js';
import { toStoredNote } from '../notes/notes.store.js';
import { toNote } from '../notes/notes.service.js';
import type { Principal } from '../orgs/principal.js';
import type { ItemTarget } from '../shared/item-target.js';
import { isLiveItem } from '../shared/item-target.store.js';
import { toStoredTask } from '../tasks/tasks.store.js';
import { toTask } from '../tasks/tasks.service.js';
import type { EntryType, TimelineEntry, TimelineQuery } from './timeline.schemas.js';
import { RANK_OF, sourcePage, type SourceRow, type TimelinePosition } from './timeline.store.js';

type Ctx = Pick<AppContext, 'database' | 'cipher' | 'cursorSeal'>;
const SORT = 'timeline';
const RANKS = 3;

/* A position travels in the shared list cursor: `value` the instant, `seq` the source's seq and rank together. */
const encode = (cursors: ListCursors, p: TimelinePosition) => cursors.seal({ sort: SORT, value: p.at, seq: p.seq * RANKS + p.rank });
function decode(cursors: ListCursors, cursor: string): TimelinePosition {
  const p = cursors.open(cursor, SORT);
  if (!p || typeof p.value !== 'string') throw validationFailed([{ field: 'after', code: 'invalid_cursor', message: 'must be a nextCursor returned by a timeline (one handed out before a server upgrade may no longer open: start again without after)' }]);
  return { at: p.value, rank: p.seq % RANKS, seq: Math.floor(p.seq / RANKS) };
}

/** Newest first: later instant, then higher rank, then higher seq. */
const newerFirst = (a: SourceRow, b: SourceRow) => b.at.localeCompare(a.at) || RANK_OF[b.type] - RANK_OF[a.type] || b.seq - a.seq;

/**
 * Which sources a key sees on an item it can read: the item's events always; notes with notes:read; tasks
 * with tasks:read (a key that may read leads but not notes gets a lead's timeline without its notes).
 */
export function timelineSources(principal: Principal): EntryType[] {
  const scopes = principal.key.scopes;
  return ['event', ...(scopes.includes('notes:read') ? ['note' as const] : []), ...(scopes.includes('tasks:read') ? ['task' as const] : [])];
}

function present(ctx: Ctx, r: SourceRow): TimelineEntry {
  if (r.type === 'event') return { type: 'event', at: r.at, event: JSON.parse(String(r.row.payload)) as Record<string, unknown> };
  if (r.type === 'note') return { type: 'note', at: r.at, note: toNote(ctx, toStoredNote(r.row as never)) };
  return { type: 'task', at: r.at, task: toTask(toStoredTask(r.row as never)) };
}

/**
 * The live item's events (those still retained) and, among `sources`, its notes and tasks, newest first. Each
 * source reads at most one page past the cursor from its index, so a page costs the same at any depth.
 */
export async function itemTimeline(ctx: Ctx, organizationId: string, target: ItemTarget, sources: readonly EntryType[], query: TimelineQuery) {
  const cursors = listCursors(ctx, organizationId);
  const after = query.after === undefined ? null : decode(cursors, query.after);
  const limit = query.limit ?? 25;
  const db = ctx.database.db;
  if (!(await isLiveItem(db, organizationId, target))) throw notFound(target.object[0]!.toUpperCase() + target.object.slice(1));
  const pages = await Promise.all(sources.map((type) => sourcePage(db, type, organizationId, target.id, after, limit + 1)));
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
