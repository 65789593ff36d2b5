import type { Executor } from '../../db/database.js';

/* The one-time indexing of records written before migration 0012 (see record-contacts.store.ts). */

export async function pendingBackfill(db: Executor): Promise<{ doneSeq: number; uptoSeq: number } | undefined> {
  const row = await db.selectFrom('privacy_backfill').select(['done_seq', 'upto_seq']).where('name', '=', 'record_contacts').executeTakeFirst();
  return row && { doneSeq: Number(row.done_seq), uptoSeq: Number(row.upto_seq) };
}

export async function recordsToBackfill(db: Executor, afterSeq: number, uptoSeq: number, limit: number) {
  const rows = await db
    .selectFrom('records as r')
    .innerJoin('custom_objects as o', 'o.id', 'r.object_id')
    .select(['r.seq', 'r.id', 'r.organization_id', 'r.data', 'o.definition'])
    .where('r.seq', '>', afterSeq)
    .where('r.seq', '<=', uptoSeq)
    .orderBy('r.seq')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ seq: Number(r.seq), id: r.id, organizationId: r.organization_id, data: r.data, definition: r.definition }));
}

/** Moves the cursor forward (never back, when two callers backfill at once); the row goes once the end is reached. */
export async function advanceBackfill(db: Executor, doneSeq: number, finished: boolean): Promise<void> {
  if (finished) {
    await db.deleteFrom('privacy_backfill').where('name', '=', 'record_contacts').execute();
    return;
  }
  await db.updateTable('privacy_backfill').set({ done_seq: doneSeq }).where('name', '=', 'record_contacts').where('done_seq', '<', doneSeq).execute();
}
