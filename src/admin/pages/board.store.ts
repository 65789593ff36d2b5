import type { Dialect } from '../../config.js';
import type { Executor } from '../../db/database.js';
import { substringMatch } from '../../db/search.js';
import { inView } from '../../db/trash.js';

/** What a board card shows of a deal; `expectedCloseDate` is the stored day (YYYY-MM-DD). */
export interface BoardCard {
  id: string;
  name: string;
  stage: string;
  amount: string | null;
  currency: string | null;
  ownerId: string | null;
  expectedCloseDate: string | null;
}

export interface BoardFilter {
  ownerId?: string;
  /** A substring of the name, as GET /deals?q=. */
  q?: string;
}

function scoped(db: Executor, dialect: Dialect, organizationId: string, filter: BoardFilter) {
  let q = db.selectFrom('deals').where('deals.organization_id', '=', organizationId).where(inView('deals', 'live'));
  if (filter.ownerId !== undefined) q = q.where('deals.owner_id', '=', filter.ownerId);
  if (filter.q !== undefined) q = q.where(substringMatch(dialect, 'deals', 'name', filter.q));
  return q;
}

/**
 * The deal count of every stage in one grouped query. Per-stage counts (GET /deals?stage=…, five times) would
 * each walk the name search's matches again: 58 ms instead of 13 at 100,000 deals and a common word.
 */
export async function countByStage(db: Executor, dialect: Dialect, organizationId: string, filter: BoardFilter): Promise<Map<string, number>> {
  const rows = await scoped(db, dialect, organizationId, filter)
    .select(['deals.stage', (eb) => eb.fn.countAll<number>().as('n')])
    .groupBy('deals.stage')
    .execute();
  return new Map(rows.map((r) => [r.stage, Number(r.n)]));
}

/** The newest `limit` deals of one stage: the (organization, stage, seq) index read backwards, no count. */
export async function newestInStage(db: Executor, dialect: Dialect, organizationId: string, stage: string, filter: BoardFilter, limit: number): Promise<BoardCard[]> {
  const rows = await scoped(db, dialect, organizationId, filter)
    .where('deals.stage', '=', stage)
    .select(['id', 'name', 'stage', 'amount', 'currency', 'owner_id', 'expected_close_date'])
    .orderBy('deals.seq', 'desc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ id: r.id, name: r.name, stage: r.stage, amount: r.amount, currency: r.currency, ownerId: r.owner_id, expectedCloseDate: r.expected_close_date }));
}
