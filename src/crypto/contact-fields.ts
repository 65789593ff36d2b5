import { normalizeEmail, normalizePhone } from '../lib/contact.js';
import { validationFailed } from '../errors.js';
import type { BlindIndex } from './blind-index.js';
import type { FieldCipher } from './field-cipher.js';
import type { EncryptedColumn } from './encrypted-column.js';

export interface SealedField {
  enc: string | null;
  bidx: string | null;
}

export interface ContactCrypto {
  cipher: FieldCipher;
  blindIndex: BlindIndex;
}

/** The AAD of a contact value: its table, row and kind (a ciphertext moved elsewhere fails to decrypt). */
export function contactAad(table: string, rowId: string, kind: 'email' | 'phone'): string {
  return `${table}:${rowId}:${kind}`;
}

/** The `<kind>_enc` columns of a table whose rows are keyed by `id` (for key rotation). */
export function contactColumns(table: string, kinds: readonly ('email' | 'phone')[]): EncryptedColumn[] {
  return kinds.map((kind) => ({ table, column: `${kind}_enc`, key: ['id'], aad: (row) => contactAad(table, String(row.id), kind) }));
}

/**
 * Encrypts a contact value bound to its row and column, with the blind index used for exact search.
 * `table` and `rowId` form the AAD, so the ciphertext can't be moved to another row unnoticed.
 */
export function sealContact(
  c: ContactCrypto,
  kind: 'email' | 'phone',
  where: { table: string; rowId: string; organizationId: string },
  normalized: string | null,
): SealedField {
  if (normalized === null) return { enc: null, bidx: null };
  return {
    enc: c.cipher.encrypt(normalized, contactAad(where.table, where.rowId, kind)),
    bidx: c.blindIndex.compute(kind, where.organizationId, normalized),
  };
}

export function openContact(c: ContactCrypto, kind: 'email' | 'phone', where: { table: string; rowId: string }, enc: string | null): string | null {
  return enc === null ? null : c.cipher.decrypt(enc, contactAad(where.table, where.rowId, kind));
}

/** Normalizes the e-mail and phone of an input (already format-checked by the schema) to their stored form. */
export function normalizeContacts(input: { email?: string | null; phoneNumber?: string | null }): { email?: string | null; phoneNumber?: string | null } {
  const out: { email?: string | null; phoneNumber?: string | null } = {};
  if (input.email !== undefined) out.email = input.email === null ? null : normalizeEmail(input.email);
  if (input.phoneNumber !== undefined) {
    if (input.phoneNumber === null) out.phoneNumber = null;
    else {
      const phone = normalizePhone(input.phoneNumber);
      if (!phone.ok) throw validationFailed([{ field: 'phoneNumber', code: 'invalid_format', message: phone.message }]);
      out.phoneNumber = phone.e164;
    }
  }
  return out;
}

/** The stored form of a row's e-mail and phone: ciphertexts bound to the row, and their blind indexes. */
export interface SealedContacts {
  emailEnc: string | null;
  emailBidx: string | null;
  phoneEnc: string | null;
  phoneBidx: string | null;
}

/** Seals both contact fields of row `rowId` of `table` (leads, accounts): AAD `<table>:<rowId>:<kind>`. */
export function sealContacts(
  c: ContactCrypto,
  where: { table: string; rowId: string; organizationId: string },
  contacts: { email?: string | null; phoneNumber?: string | null },
): SealedContacts {
  const email = sealContact(c, 'email', where, contacts.email ?? null);
  const phone = sealContact(c, 'phone', where, contacts.phoneNumber ?? null);
  return { emailEnc: email.enc, emailBidx: email.bidx, phoneEnc: phone.enc, phoneBidx: phone.bidx };
}
