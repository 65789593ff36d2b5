import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/database.js';
import { resourceIdsOf } from '../idempotency/idempotency.service.js';
import { responseAad } from '../idempotency/idempotency.store.js';
import { deleteDerived, deleteResponses, unlabelledResponses } from './privacy.store.js';

/**
 * Stored responses without a resource id (from before migration 0012, and batches, which name many): opened here
 * to find those about the given items.
 */
async function unlabelledResponsesNaming(ctx: Pick<AppContext, 'cipher'>, trx: Executor, organizationId: string, ids: ReadonlySet<string>): Promise<string[]> {
  const rows = await unlabelledResponses(trx, organizationId);
  return rows.filter((r) => {
    return resourceIdsOf(JSON.parse(ctx.cipher.decrypt(r.body, responseAad(organizationId, r.key)))).some((id) => ids.has(id));
  }).map((r) => r.key);
}

/**
 * Removes, in the caller's transaction, what names items removed for good (erased or purged) and could identify
 * a person: the events describing them with their webhook deliveries, the stored idempotent responses about them
 * (a batch's too), and their reminder, contact-index and custom-value rows (privacy.store.ts deleteDerived).
 */
export async function removeDerived(ctx: Pick<AppContext, 'cipher'>, trx: Executor, organizationId: string, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await deleteDerived(trx, organizationId, ids);
  await deleteResponses(trx, organizationId, await unlabelledResponsesNaming(ctx, trx, organizationId, new Set(ids)));
}
