import type { FieldCipher } from '../../crypto/field-cipher.js';

/** After a rotation the previous secret keeps signing (next to the new one) this long (contract §5). */
export const ROTATION_WINDOW_MS = 24 * 60 * 60 * 1000;

type Slot = 'secret' | 'previous_secret';

/** Signing secrets are encrypted at rest like contact fields; the AAD binds each to its endpoint and slot. */
export function sealSecret(cipher: FieldCipher, endpointId: string, slot: Slot, secret: string): string {
  return cipher.encrypt(secret, `webhook_endpoints:${endpointId}:${slot}`);
}

export function openSecret(cipher: FieldCipher, endpointId: string, slot: Slot, sealed: string): string {
  return cipher.decrypt(sealed, `webhook_endpoints:${endpointId}:${slot}`);
}

export interface SealedSecrets {
  id: string;
  secretEnc: string;
  previousSecretEnc: string | null;
  previousSecretExpiresAt: string | null;
}

/** The secrets a delivery is signed with at `now`: the current one, then the previous one inside its window. */
export function signingSecrets(cipher: FieldCipher, e: SealedSecrets, now: Date): string[] {
  const secrets = [openSecret(cipher, e.id, 'secret', e.secretEnc)];
  if (e.previousSecretEnc !== null && e.previousSecretExpiresAt !== null && now.toISOString() < e.previousSecretExpiresAt) {
    secrets.push(openSecret(cipher, e.id, 'previous_secret', e.previousSecretEnc));
  }
  return secrets;
}
