import type { EncryptedColumn } from '../../crypto/encrypted-column.js';
import type { Definition } from '../objects/definition.js';
import { isContactField } from '../objects/field-values.js';
import { BUILTIN_RESOURCES } from './builtin-resources.js';
import { customAad } from './custom-values.js';

/** The `custom` JSON of leads, accounts and deals: its e-mail and phone values are sealed one by one (key rotation). */
export const CUSTOM_FIELD_ENCRYPTED_COLUMNS: EncryptedColumn[] = BUILTIN_RESOURCES.map((resource) => ({
  table: resource,
  column: 'custom',
  key: ['id'],
  with: ['organization_id'],
  // Which properties are sealed depends on each row's organization: its e-mail and phone fields of the resource.
  async sealedProperties(db, rows) {
    const organizations = [...new Set(rows.map((r) => String(r.organization_id)))];
    if (organizations.length === 0) return () => [];
    const defined = await db.selectFrom('builtin_fields').select(['organization_id', 'definition']).where('resource', '=', resource).where('organization_id', 'in', organizations).execute();
    const keys = new Map(defined.map((d) => [d.organization_id, (JSON.parse(d.definition) as Definition).fields.filter(isContactField).map((f) => f.key)]));
    return (row) => keys.get(String(row.organization_id)) ?? [];
  },
  aad: (row, property) => customAad(resource, String(row.id), property ?? ''),
}));
