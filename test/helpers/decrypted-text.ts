import { ENCRYPTED_COLUMNS } from '../../src/modules/shared/encrypted-columns.js';
import type { TestApp } from './test-app.js';

/**
 * Every value still sealed in the database, decrypted with the current key ring: what the ciphertexts left
 * would give anyone holding the keys. Each column is read as key rotation reads it (modules/shared/encrypted-columns.ts).
 */
export async function decryptedText(t: TestApp): Promise<string> {
  const db = t.ctx.database.db;
  const out: string[] = [];
  for (const column of ENCRYPTED_COLUMNS) {
    let q = db.selectFrom(column.table as never).select([...column.key, ...(column.with ?? []), column.column] as never[]);
    for (const [k, v] of Object.entries(column.where ?? {})) q = q.where(k as never, '=', v as never);
    const rows = (await q.execute()) as Record<string, unknown>[];
    // As key rotation does: no empty batch (a `sealedProperties` may look its rows' objects up with `in ()`, which PostgreSQL refuses).
    if (rows.length === 0) continue;
    const sealed = column.sealedProperties ? await column.sealedProperties(db, rows) : undefined;
    for (const row of rows) {
      const value = row[column.column];
      if (typeof value !== 'string') continue;
      if (!sealed) {
        out.push(t.ctx.cipher.decrypt(value, column.aad(row)));
        continue;
      }
      const data = JSON.parse(value) as Record<string, unknown>;
      for (const property of sealed(row)) {
        if (typeof data[property] === 'string') out.push(t.ctx.cipher.decrypt(data[property] as string, column.aad(row, property)));
      }
    }
  }
  return out.join('\n');
}
