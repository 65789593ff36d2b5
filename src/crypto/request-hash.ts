import { createHmac, createSecretKey, hkdfSync } from 'node:crypto';

/** The HKDF purpose label: the request-hash key is derived from, never equal to, the blind-index key. */
const PURPOSE = 'crm idempotency request hash v1';

/**
 * Keyed hash of an idempotent request, kept 24 hours to tell a retry from another request under the same
 * Idempotency-Key. Keyed because a body can be little more than an e-mail or phone (an erasure's is exactly that):
 * a plain SHA-256 of it would let anyone holding the database confirm a guess. The key is derived (HKDF, its own
 * purpose label) from the deployment's blind-index key, which the database holds only wrapped by the encryption
 * key ring (blind-index-key.store.ts): rotating encryption keys re-wraps that key, so stored hashes stay valid.
 */
export interface RequestHasher {
  hash(organizationId: string, idempotencyKey: string, request: string): string;
}

export function createRequestHasher(blindIndexKey: Buffer): RequestHasher {
  const secret = createSecretKey(Buffer.from(hkdfSync('sha256', blindIndexKey, Buffer.alloc(0), PURPOSE, 32)));
  return {
    hash(organizationId, idempotencyKey, request) {
      // Length-prefixed like the blind index; the key is in it so equal bodies under two keys are not linkable.
      const framed = [organizationId, idempotencyKey].map((p) => `${Buffer.byteLength(p)}:${p}`).join('') + request;
      return createHmac('sha256', secret).update(framed).digest('hex');
    },
  };
}
