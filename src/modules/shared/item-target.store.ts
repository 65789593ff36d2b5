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
  return (await liveItemIds(db, organizationId, target, [target.id])).has(target.id);
}

/**
 * Which of `ids` are live (not trashed) items of the organization of one kind: leads, accounts, deals, or
 * records of the object `objectSlug` — one query, in the caller's transaction.
 */
export async function liveItemIds(db: Executor, organizationId: string, kind: Omit<ItemTarget, 'id'>, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  if (kind.object === 'record') {
    const rows = await db
      .selectFrom('records')
      .innerJoin('custom_objects', 'custom_objects.id', 'records.object_id')
      .select('records.id')
      .where('records.organization_id', '=', organizationId)
      .where('records.id', 'in', [...ids])
      .where('custom_objects.organization_id', '=', organizationId)
      .where('custom_objects.slug', '=', kind.objectSlug ?? '')
      .where(inView('records', 'live'))
      .execute();
    return new Set(rows.map((r) => r.id));
  }
  const table = TABLE_OF[kind.object];
  const rows = await db.selectFrom(table).select('id').where('organization_id', '=', organizationId).where('id', 'in', [...ids]).where(inView(table, 'live')).execute();
  return new Set(rows.map((r) => r.id));
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
