import type { Executor } from '../../db/database.js';
import { inView } from '../../db/trash.js';

/** The item a note or task is about, as stored (the same shape as the API's ItemTarget, which validates it). */
export interface ItemTarget {
  object: 'lead' | 'account' | 'deal' | 'record';
  id: string;
  objectSlug?: string;
}

const TABLE_OF = { lead: 'leads', account: 'accounts', deal: 'deals' } as const;

/** True when the target is a live (not trashed) item of the organization; a record also in the named object. */
export async function isLiveItem(db: Executor, organizationId: string, target: ItemTarget): Promise<boolean> {
  if (target.object === 'record') {
    const row = await db
      .selectFrom('records')
      .innerJoin('custom_objects', 'custom_objects.id', 'records.object_id')
      .select('records.id')
      .where('records.organization_id', '=', organizationId)
      .where('records.id', '=', target.id)
      .where('custom_objects.slug', '=', target.objectSlug ?? '')
      .where(inView('records', 'live'))
      .executeTakeFirst();
    return row !== undefined;
  }
  const table = TABLE_OF[target.object];
  const row = await db.selectFrom(table).select('id').where('organization_id', '=', organizationId).where('id', '=', target.id).where(inView(table, 'live')).executeTakeFirst();
  return row !== undefined;
}

/** The columns an attached row (note, task) keeps its target in. */
export interface TargetColumns {
  target_object: string | null;
  target_id: string | null;
  target_slug: string | null;
}

export const targetColumns = (t: ItemTarget | null): TargetColumns => ({ target_object: t?.object ?? null, target_id: t?.id ?? null, target_slug: t?.objectSlug ?? null });

export function targetOf(row: TargetColumns): ItemTarget | null {
  if (row.target_object === null || row.target_id === null) return null;
  const object = row.target_object as ItemTarget['object'];
  return { object, id: row.target_id, ...(row.target_slug !== null ? { objectSlug: row.target_slug } : {}) };
}
