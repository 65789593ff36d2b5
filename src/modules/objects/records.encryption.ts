import type { EncryptedColumn } from '../../crypto/encrypted-column.js';
import type { Definition } from './definition.js';
import { isContactField } from './field-values.js';

/** A record's e-mail and phone values are sealed one by one inside its JSON data, bound to record and field. */
export const recordValueAad = (recordId: string, fieldKey: string): string => `records:${recordId}:${fieldKey}`;

export const RECORD_ENCRYPTED_COLUMNS: EncryptedColumn[] = [
  {
    table: 'records',
    column: 'data',
    key: ['id'],
    with: ['object_id'],
    // Which properties are sealed depends on each record's object: its e-mail and phone fields.
    async sealedProperties(db, rows) {
      const ids = [...new Set(rows.map((r) => String(r.object_id)))];
      const objects = await db.selectFrom('custom_objects').select(['id', 'definition']).where('id', 'in', ids).execute();
      const keys = new Map(objects.map((o) => [o.id, (JSON.parse(o.definition) as Definition).fields.filter(isContactField).map((f) => f.key)]));
      return (row) => keys.get(String(row.object_id)) ?? [];
    },
    aad: (row, property) => recordValueAad(String(row.id), property ?? ''),
  },
];
