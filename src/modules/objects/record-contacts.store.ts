import type { Executor } from '../../db/database.js';

/*
 * The blind indexes of records' e-mail and phone fields (migration 0012). A record's contact values live
 * encrypted inside its JSON data, where no index reaches; this table lets an erasure or an export find the
 * records holding a value the way leads and accounts are found, through their email_bidx / phone_bidx.
 */

/** Replaces the index entries of one record with `bidxs` (its current contact values). */
export async function replaceRecordContacts(db: Executor, organizationId: string, recordId: string, bidxs: readonly string[]): Promise<void> {
  await db.deleteFrom('record_contacts').where('record_id', '=', recordId).execute();
  await addRecordContacts(db, organizationId, bidxs.map((bidx) => ({ recordId, bidx })));
}

export async function addRecordContacts(db: Executor, organizationId: string, entries: readonly { recordId: string; bidx: string }[]): Promise<void> {
  const unique = [...new Map(entries.map((e) => [`${e.recordId}:${e.bidx}`, e])).values()];
  for (let i = 0; i < unique.length; i += 300) {
    const rows = unique.slice(i, i + 300).map((e) => ({ record_id: e.recordId, bidx: e.bidx, organization_id: organizationId }));
    await db.insertInto('record_contacts').values(rows).onConflict((oc) => oc.columns(['record_id', 'bidx']).doNothing()).execute();
  }
}
