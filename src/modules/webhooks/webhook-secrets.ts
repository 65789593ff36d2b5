import type { FieldCipher } from '../../crypto/field-cipher.js';
import type { EncryptedColumn } from '../../crypto/encrypted-column.js';

/** After a rotation the previous secret keeps signing (next to the new one) this long (contract §5). */
export const ROTATION_WINDOW_MS = 24 * 60 * 60 * 1000;

type Slot = 'secret' | 'previous_secret';

/** Signing secrets are encrypted at rest like contact fields; the AAD binds each to its endpoint and slot. */
const secretAad = (endpointId: string, slot: Slot) => `webhook_endpoints:${endpointId}:${slot}`;

export function sealSecret(cipher: FieldCipher, endpointId: string, slot: Slot, secret: string): string {
  return cipher.encrypt(secret, secretAad(endpointId, slot));
}

export function openSecret(cipher: FieldCipher, endpointId: string, slot: Slot, sealed: string): string {
  return cipher.decrypt(sealed, secretAad(endpointId, slot));
}

/** Both slots, for key rotation (`crm reencrypt`). */
export const WEBHOOK_ENCRYPTED_COLUMNS: EncryptedColumn[] = (['secret', 'previous_secret'] as const).map((slot) => ({
  table: 'webhook_endpoints',
  column: `${slot}_enc`,
  key: ['id'],
  aad: (row) => secretAad(String(row.id), slot),
}));

export interface SealedSecrets {
  id: string;
  secretEnc: string;
  previousSecretEnc: string | null;
  previousSecretExpiresAt: string | null;
}

/**
 * The secrets a delivery is signed with at `now`: the current one, then the previous one inside its window.
 * `cache` (ciphertext → secret) spares a decryption per attempt; a rotation writes new ciphertexts, so an
 * entry never goes stale.
 */
export function signingSecrets(cipher: FieldCipher, e: SealedSecrets, now: Date, cache?: Map<string, string>): string[] {
  const open = (slot: Slot, sealed: string) => {
    const key = `${e.id}:${slot}:${sealed}`;
    let secret = cache?.get(key);
    if (secret === undefined) {
      secret = openSecret(cipher, e.id, slot, sealed);
      if (cache && cache.size >= 10_000) cache.clear();
      cache?.set(key, secret);
    }
    return secret;
  };
  const secrets = [open('secret', e.secretEnc)];
  if (e.previousSecretEnc !== null && e.previousSecretExpiresAt !== null && now.toISOString() < e.previousSecretExpiresAt) {
    secrets.push(open('previous_secret', e.previousSecretEnc));
  }
  return secrets;
}
