import type { Executor } from '../../db/database.js';

/** Lead counts per status, answered from the (status, organization_id) index without reading the rows. */
export async function countLeadsByStatus(db: Executor, organizationId: string, statuses: readonly string[]): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('leads')
    .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
    .where('status', 'in', [...statuses])
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
