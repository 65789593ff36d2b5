/**
 * One column holding values sealed by the field cipher. Each module declares its own (next to its store),
 * and src/crypto/encrypted-columns.ts lists them all: key rotation (`crm reencrypt`) re-encrypts exactly
 * what is listed, so a new encrypted column is one more entry there.
 */
export interface EncryptedColumn {
  table: string;
  column: string;
  /** The primary-key columns: batches page through them, and each update is keyed by them. */
  key: readonly string[];
  /** Only rows whose columns equal these values (a shared table where other rows are sealed differently). */
  where?: Readonly<Record<string, string>>;
  /** The additional authenticated data the value was sealed with, from the row's key columns. */
  aad(row: Readonly<Record<string, unknown>>): string;
}
