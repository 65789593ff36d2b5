import type { Executor } from '../../db/database.js';
import type { CrmEvent } from '../../modules/events/events.js';

/** Lead counts per status; answered from the (organization_id, status) index, without reading the rows. */
export async function countLeadsByStatus(db: Executor, organizationId: string): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('leads')
    .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
    .where('organization_id', '=', organizationId)
    .groupBy('status')
    .execute();
  return new Map(rows.map((r) => [r.status, Number(r.n)]));
}

export async function countActiveKeys(db: Executor, organizationId: string, now: string): Promise<number> {
  const row = await db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('organization_id', '=', organizationId)
    .where('revoked_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The newest events of the organization (the outbox doubles as an activity log). */
export async function listRecentEvents(db: Executor, organizationId: string, limit: number): Promise<CrmEvent[]> {
  const rows = await db.selectFrom('events').select('payload').where('organization_id', '=', organizationId).orderBy('seq', 'desc').limit(limit).execute();
  return rows.map((r) => JSON.parse(r.payload) as CrmEvent);
}
