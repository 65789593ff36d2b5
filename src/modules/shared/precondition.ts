import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/database.js';
import { lockKeys, type LockKey } from '../../db/key-locks.js';
import { lockRow, type LockableTable } from '../../db/row-lock.js';
import { AppError } from '../../errors.js';
import { etagMatches } from '../../lib/etag.js';

/** How a write is asked for: `ifMatch` makes it conditional on the resource's current tag (contract §8). */
export interface WriteOptions {
  ifMatch?: string | undefined;
  /** The transaction holds the write's key locks already: a batch takes all its items' at once (lockWriteKeys). */
  keysLocked?: boolean;
}

/**
 * Before a write reads anything: locks the keys it will probe or set (db/key-locks.ts), unless its caller holds
 * them (`keysLocked`).
 */
export async function lockWriteKeys(trx: Executor, opts: Pick<WriteOptions, 'keysLocked'>, keys: () => readonly LockKey[]): Promise<void> {
  if (!opts.keysLocked) await lockKeys(trx, keys);
}

/**
 * Before a conditional write reads the item: locks its row, so the tag compared is the one of the version the
 * write replaces (no other write can slip between the check and the write).
 */
export async function lockForCondition(ctx: Pick<AppContext, 'database'>, trx: Executor, table: LockableTable, organizationId: string, id: string, opts: WriteOptions): Promise<void> {
  if (opts.ifMatch !== undefined) await lockRow(trx, ctx.database.dialect, table, organizationId, id);
}

/**
 * The If-Match check on the current item as the API shows it (`key`: its name in the envelope). A mismatch
 * is 412 with the current item in `data` and its tag in ETag, so the client can merge and retry at once.
 */
export function checkCondition(ctx: Pick<AppContext, 'entityTagger'>, opts: WriteOptions, key: string, current: unknown): void {
  if (opts.ifMatch === undefined) return;
  const etag = ctx.entityTagger.tagOf(current);
  if (etagMatches(opts.ifMatch, etag, 'strong')) return;
  // `stages` (the deal stage list) is the one plural resource.
  throw new AppError('PRECONDITION_FAILED', `The ${key} ${key.endsWith('s') ? 'have' : 'has'} changed since the version named by If-Match; data.${key} is the current one`, {
    data: { [key]: current },
    headers: { etag },
  });
}
