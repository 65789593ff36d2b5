import type { Dialect } from '../../config.js';
import type { Executor } from '../../db/database.js';
import type { PurgedRow } from '../../db/trash.js';
import { objectsByIds } from './objects.store.js';
import { unindexRecords } from './record-search.store.js';

/**
 * What hangs on records removed for good, removed with them in the caller's transaction: (SQLite) their search
 * entries. (Their reminder rows, which reference them, go first: see the Trashable's `purging` and
 * deleteRemindersOfExpiredTrash.) Returns each record's object slug, which its record.purged event carries.
 */
export async function removeRecordDependents(trx: Executor, dialect: Dialect, rows: readonly PurgedRow[]): Promise<Map<string, string>> {
  const objects = await objectsByIds(trx, [...new Set(rows.map((r) => r.objectId!))]);
  for (const [objectId, object] of objects) {
    await unindexRecords(trx, dialect, object.seq, rows.filter((r) => r.objectId === objectId).map((r) => r.seq));
  }
  return new Map(rows.flatMap((r) => (objects.has(r.objectId!) ? [[r.id, objects.get(r.objectId!)!.slug] as const] : [])));
}
