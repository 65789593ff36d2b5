import { createCipheriv, createDecipheriv, createHash, createSecretKey, type KeyObject } from 'node:crypto';
import { randomBytesPooled } from '../lib/random.js';

/**
 * AES-256-GCM for contact fields and other secrets at rest.
 * Ciphertext form: `v1.<keyId>.<base64url(iv ‖ tag ‖ ciphertext)>`. The key id names the key that encrypted
 * the value, so retired keys still decrypt old rows while the current key encrypts new ones (rotation).
 * The AAD binds a value to its place (e.g. `leads:<id>:email`): a ciphertext copied to another row or
 * column fails authentication instead of decrypting.
 */
const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export class DecryptionError extends Error {}

export interface FieldCipher {
  readonly currentKeyId: string;
  encrypt(plaintext: string, aad: string): string;
  decrypt(ciphertext: string, aad: string): string;
  /** True when the value was encrypted with a key other than the current one. */
  isStale(ciphertext: string): boolean;
}

export function keyIdOf(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

/** `keys`: base64 32-byte keys, current first, then retired ones that must still decrypt. */
export function createFieldCipher(keys: readonly string[]): FieldCipher {
  if (keys.length === 0) throw new Error('at least one encryption key is required');
  // KeyObjects: OpenSSL gets the key material once, not on every encrypt/decrypt.
  const ring = new Map<string, KeyObject>();
  for (const encoded of keys) {
    const key = Buffer.from(encoded, 'base64');
    if (key.length !== 32) throw new Error('encryption keys must be 32 bytes');
    ring.set(keyIdOf(key), createSecretKey(key));
  }
  const currentKeyId = keyIdOf(Buffer.from(keys[0]!, 'base64'));
  const current = ring.get(currentKeyId)!;

  return {
    currentKeyId,
    encrypt(plaintext, aad) {
      const iv = randomBytesPooled(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', current, iv);
      cipher.setAAD(Buffer.from(aad, 'utf8'));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      const packed = Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
      return `${VERSION}.${currentKeyId}.${packed}`;
    },
    decrypt(ciphertext, aad) {
      const [version, keyId, packed] = ciphertext.split('.');
      const key = keyId === undefined ? undefined : ring.get(keyId);
      if (version !== VERSION || packed === undefined || key === undefined) {
        throw new DecryptionError('ciphertext has an unknown version or key id');
      }
      const raw = Buffer.from(packed, 'base64url');
      if (raw.length < IV_BYTES + TAG_BYTES) throw new DecryptionError('ciphertext is truncated');
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(aad, 'utf8'));
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      try {
        return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
      } catch {
        throw new DecryptionError('ciphertext failed authentication');
      }
    },
    isStale(ciphertext) {
      return ciphertext.split('.')[1] !== currentKeyId;
    },
  };
}
