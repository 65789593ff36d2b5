import { randomBytes } from 'node:crypto';
import type { Executor } from '../db/database.js';
import type { FieldCipher } from './field-cipher.js';
import type { EncryptedColumn } from './encrypted-column.js';

const NAME = 'blind_index_key';
const AAD = 'system_secrets:blind_index_key';

/** Re-wrapped by key rotation (`crm reencrypt`) like any sealed column; the HMAC key itself never changes. */
export const BLIND_INDEX_KEY_COLUMNS: EncryptedColumn[] = [
  { table: 'system_secrets', column: 'value_enc', key: ['name'], where: { name: NAME }, aad: () => AAD },
];

/**
 * The blind-index HMAC key is generated once per deployment and stored wrapped by the encryption key ring:
 * encryption keys can rotate (the wrapper is re-encrypted, see BLIND_INDEX_KEY_COLUMNS) while every stored
 * index entry stays valid. It is also the root of the keys of the cursor seal (cursor-seal.ts), the idempotency
 * request hash (request-hash.ts) and the entity tags (entity-tag.ts), each under its own label, so cursors, stored
 * request hashes and ETags outlive a rotation too.
 * Several instances starting at once agree on one key: the first insert wins, the others read it.
 */
export async function loadBlindIndexKey(db: Executor, cipher: FieldCipher, now: Date): Promise<Buffer> {
  const existing = await db.selectFrom('system_secrets').select('value_enc').where('name', '=', NAME).executeTakeFirst();
  if (existing) return Buffer.from(cipher.decrypt(existing.value_enc, AAD), 'base64');
  const fresh = randomBytes(32).toString('base64');
  await db
    .insertInto('system_secrets')
    .values({ name: NAME, value_enc: cipher.encrypt(fresh, AAD), created_at: now.toISOString() })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  return loadBlindIndexKey(db, cipher, now);
}
