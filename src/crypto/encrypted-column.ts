import type { Executor } from '../db/database.js';

export type ColumnRow = Readonly<Record<string, unknown>>;

/**
 * One column holding values sealed by the field cipher. Each module declares its own (next to its store),
 * and src/modules/shared/encrypted-columns.ts lists them all: key rotation (`crm reencrypt`) re-encrypts exactly
 * what is listed, so a new encrypted column is one more entry there.
 */
export interface EncryptedColumn {
  table: string;
  column: string;
  /** The primary-key columns: batches page through them, and each update is keyed by them. */
  key: readonly string[];
  /** Only rows whose columns equal these values (a shared table where other rows are sealed differently). */
  where?: Readonly<Record<string, string>>;
  /** Further columns read with each row, for `aad` or `sealedProperties`. */
  with?: readonly string[];
  /**
   * Set when the column holds a JSON object with some sealed property values rather than one ciphertext:
   * for a batch of rows, which properties of each row's object are sealed.
   */
  sealedProperties?(db: Executor, rows: readonly ColumnRow[]): Promise<(row: ColumnRow) => readonly string[]>;
  /** The additional authenticated data the value (the `property` of a JSON column) was sealed with. */
  aad(row: ColumnRow, property?: string): string;
}
