import { createHmac, createSecretKey } from 'node:crypto';

/**
 * Keyed blind index for exact lookups on encrypted fields: HMAC-SHA256 over the normalized value,
 * domain-separated by field kind and organization so equal values in two organizations (or an e-mail
 * equal to a phone string) never share an index entry. The HMAC key is independent of the encryption
 * key ring (it is stored wrapped by it), so rotating encryption keys never invalidates the index.
 */
export interface BlindIndex {
  compute(kind: 'email' | 'phone', organizationId: string, normalizedValue: string): string;
}

export function createBlindIndex(key: Buffer): BlindIndex {
  if (key.length < 32) throw new Error('blind index key must be at least 32 bytes');
  // A KeyObject: OpenSSL gets the key material once, not on every HMAC (2.9 → 2.5 µs each; two per new lead).
  const secret = createSecretKey(key);
  return {
    compute(kind, organizationId, normalizedValue) {
      // Length-prefixed parts: no choice of organization id or value can collide with another split.
      const framed = [kind, organizationId].map((p) => `${Buffer.byteLength(p)}:${p}`).join('') + normalizedValue;
      return createHmac('sha256', secret).update(framed).digest('hex');
    },
  };
}
