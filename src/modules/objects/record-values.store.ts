import type { Executor } from '../../db/database.js';
import type { IndexedValue } from './record-values.js';

/** The filterable values of records (record-values.ts), written in the transaction of the record's write. */

const CHUNK = 300;

export async function addRecordValues(db: Executor, objectId: string, entries: readonly { seq: number; values: readonly IndexedValue[] }[]): Promise<void> {
  const rows = entries.flatMap((e) => e.values.map((v) => ({ record_seq: e.seq, object_id: objectId, field_key: v.fieldKey, position: v.position, num_value: v.numValue, text_value: v.textValue })));
  for (let i = 0; i < rows.length; i += CHUNK) await db.insertInto('record_values').values(rows.slice(i, i + CHUNK)).execute();
}

/** Replaces a record's values with its current ones. (Removal with the record is the foreign key's cascade.) */
export async function replaceRecordValues(db: Executor, objectId: string, seq: number, values: readonly IndexedValue[]): Promise<void> {
  await db.deleteFrom('record_values').where('record_seq', '=', seq).execute();
  await addRecordValues(db, objectId, [{ seq, values }]);
}
