import type { AppContext } from '../../context.js';
import type { Definition } from '../objects/definition.js';
import { isContactField } from '../objects/field-values.js';
import { recordContactIndexes } from '../objects/record-contacts.js';
import { addRecordContacts } from '../objects/record-contacts.store.js';
import { recordValueAad } from '../objects/records.encryption.js';
import { advanceBackfill, pendingBackfill, recordsToBackfill } from './backfill.store.js';
import { own } from '../../lib/own.js';

const BATCH = 500;

/**
 * Indexes the contact values of records written before migration 0012, which computed no blind index for
 * them (a migration doesn't hold the keys). Runs before an erasure or an export until nothing is left, one
 * batch per transaction; afterwards it is one lookup of an absent row.
 */
export async function indexEarlierRecords(ctx: Pick<AppContext, 'database' | 'cipher' | 'blindIndex'>): Promise<void> {
  for (let state = await pendingBackfill(ctx.database.db); state; state = await pendingBackfill(ctx.database.db)) {
    const rows = await recordsToBackfill(ctx.database.db, state.doneSeq, state.uptoSeq, BATCH);
    const last = rows.at(-1)?.seq ?? state.uptoSeq;
    await ctx.database.transaction(async (trx) => {
      for (const row of rows) {
        const definition = JSON.parse(row.definition) as Definition;
        const data = JSON.parse(row.data) as Record<string, unknown>;
        const clear = Object.fromEntries(
          definition.fields.filter((f) => isContactField(f) && typeof own(data, f.key) === 'string').map((f) => [f.key, ctx.cipher.decrypt(String(own(data, f.key)), recordValueAad(row.id, f.key))]),
        );
        const bidxs = recordContactIndexes(ctx.blindIndex, row.organizationId, definition, clear);
        await addRecordContacts(trx, row.organizationId, bidxs.map((bidx) => ({ recordId: row.id, bidx })));
      }
      await advanceBackfill(trx, last, rows.length < BATCH || last >= state!.uptoSeq);
    });
  }
}
