import type { ExpressionBuilder, Kysely } from 'kysely';
import type { Executor } from '../../db/database.js';
import { timeRangeConditions } from '../../db/list-page.js';
import { inView } from '../../db/trash.js';
import type { TimeRange } from '../../lib/list-request.js';
import type { EntryType } from './timeline.schemas.js';

/**
 * The three sources of an item's timeline, each read newest first from its own index: the item's events
 * (events_object), and the notes and tasks on it ((organization_id, target_id, created_at), live only).
 * `rank` breaks ties between sources at the same instant, so (at, rank, seq) orders every entry.
 */
const SOURCES = {
  event: { table: 'events', item: 'object_id', rank: 0, trashable: false },
  note: { table: 'notes', item: 'target_id', rank: 1, trashable: true },
  task: { table: 'tasks', item: 'target_id', rank: 2, trashable: true },
} as const;
export const RANK_OF: Record<EntryType, number> = { event: 0, note: 1, task: 2 };

/** A place in the order (newest first): entries after it are older, or as old and lower in (rank, seq). */
export interface TimelinePosition {
  at: string;
  rank: number;
  seq: number;
}

export interface SourceRow {
  type: EntryType;
  at: string;
  seq: number;
  row: Record<string, unknown>;
}

/** The three tables through their shared columns (organization_id, seq, created_at, and the item's). */
const loose = (db: Executor) => db as unknown as Kysely<any>;

/** Where a page starts (null: the newest entry) and the bounds of `at` it keeps to. */
export interface TimelineWindow {
  after: TimelinePosition | null;
  range: Pick<TimeRange, 'createdAfter' | 'createdBefore'>;
}

/** Up to `limit` entries of one source for the item, after `window.after` and within its range, newest first. */
export async function sourcePage(db: Executor, type: EntryType, organizationId: string, itemId: string, window: TimelineWindow, limit: number): Promise<SourceRow[]> {
  const s = SOURCES[type];
  const after = window.after;
  let q = loose(db).selectFrom(s.table).selectAll().where('organization_id', '=', organizationId).where(s.item, '=', itemId);
  if (s.trashable) q = q.where(inView(s.table, 'live'));
  for (const c of timeRangeConditions(s.table, window.range)) q = q.where(c);
  if (after) {
    q = q.where((eb: ExpressionBuilder<any, any>) => {
      if (s.rank < after.rank) return eb('created_at', '<=', after.at);
      if (s.rank > after.rank) return eb('created_at', '<', after.at);
      return eb.or([eb('created_at', '<', after.at), eb.and([eb('created_at', '=', after.at), eb('seq', '<', after.seq)])]);
    });
  }
  const rows = (await q.orderBy('created_at', 'desc').orderBy('seq', 'desc').limit(limit).execute()) as Record<string, unknown>[];
  return rows.map((row) => ({ type, at: String(row.created_at), seq: Number(row.seq), row }));
}
