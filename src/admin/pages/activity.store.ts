import type { Executor } from '../../db/database.js';
import type { CrmEvent } from '../../modules/events/events.js';

/**
 * The newest events of the organization, or of one record (the outbox doubles as an activity log). Both
 * read an index backwards ((organization_id, seq) or (organization_id, object_id, seq)), so the cost does
 * not grow with the number of events.
 */
export async function listRecentEvents(db: Executor, organizationId: string, opts: { objectId?: string; limit: number }): Promise<CrmEvent[]> {
  const rows = await db
    .selectFrom('events')
    .select('payload')
    .where('organization_id', '=', organizationId)
    .$if(opts.objectId !== undefined, (q) => q.where('object_id', '=', opts.objectId!))
    .orderBy('seq', 'desc')
    .limit(opts.limit)
    .execute();
  return rows.map((r) => JSON.parse(r.payload) as CrmEvent);
}
