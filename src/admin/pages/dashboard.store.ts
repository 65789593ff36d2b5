import type { Executor } from '../../db/database.js';
import { inView, type TrashView } from '../../db/trash.js';

async function countByStatus(db: Executor, organizationId: string, statuses: readonly string[], view: TrashView): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('leads')
    .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
    .where('status', 'in', [...statuses])
    .where('organization_id', '=', organizationId)
    .where(inView('leads', view))
    .groupBy('status')
    .execute();
  return new Map(rows.map((r) => [r.status, Number(r.n)]));
}

/**
 * Live lead counts per status: all leads, answered from the (status, organization_id) index without reading
 * the rows, less the trashed ones, read through the small trash index (a live condition would read every row).
 */
export async function countLeadsByStatus(db: Executor, organizationId: string, statuses: readonly string[]): Promise<Map<string, number>> {
  const [all, trashed] = await Promise.all([countByStatus(db, organizationId, statuses, 'any'), countByStatus(db, organizationId, statuses, 'trash')]);
  return new Map([...all].flatMap(([status, n]) => (n - (trashed.get(status) ?? 0) > 0 ? [[status, n - (trashed.get(status) ?? 0)] as const] : [])));
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
