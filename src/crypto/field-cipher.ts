import { createCipheriv, createDecipheriv, createHash, createSecretKey, type KeyObject } from 'node:crypto';
import { FifoMap } from '../lib/fifo-map.js';
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
  /** Drops every cached plaintext (after an erasure, no erased value may stay in memory). */
  forgetCached(): void;
}

export function keyIdOf(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 8);
}

/** Values longer than this (stored idempotent responses) are never cached: contact fields are far shorter. */
const CACHEABLE_LENGTH = 320;

/**
 * Plaintexts of recently encrypted or decrypted short values, by ciphertext, in this process's memory only.
 * Setting up an AES-GCM decipher costs several µs in Node (a native object per call and its collection):
 * on a `GET /leads/{id}` its two decryptions were a third of the request (docs/performance.md). A ciphertext
 * names its key, IV and tag, so a hit is exactly the value a decryption would give; it is served only for the
 * same AAD (a ciphertext moved to another row still fails). Oldest entries leave first.
 */
class PlaintextCache {
  private readonly entries: FifoMap<string, { aad: string; plaintext: string }>;

  constructor(capacity: number) {
    this.entries = new FifoMap(capacity);
  }

  get(ciphertext: string, aad: string): string | undefined {
    const entry = this.entries.get(ciphertext);
    return entry !== undefined && entry.aad === aad ? entry.plaintext : undefined;
  }

  clear(): void {
    this.entries.clear();
  }

  set(ciphertext: string, aad: string, plaintext: string): void {
    if (plaintext.length > CACHEABLE_LENGTH) return;
    this.entries.set(ciphertext, { aad, plaintext });
  }
}

/**
 * `keys`: base64 32-byte keys, current first, then retired ones that must still decrypt. `cacheSize`: how many
 * short plaintexts to keep by ciphertext (0 keeps none).
 */
export function createFieldCipher(keys: readonly string[], opts: { cacheSize?: number } = {}): FieldCipher {
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
  const cache = new PlaintextCache(opts.cacheSize ?? 0);

  return {
    currentKeyId,
    encrypt(plaintext, aad) {
      const iv = randomBytesPooled(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', current, iv);
      cipher.setAAD(Buffer.from(aad, 'utf8'));
      const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      const packed = Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
      const ciphertext = `${VERSION}.${currentKeyId}.${packed}`;
      cache.set(ciphertext, aad, plaintext);
      return ciphertext;
    },
    decrypt(ciphertext, aad) {
      const cached = cache.get(ciphertext, aad);
      if (cached !== undefined) return cached;
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
      let plaintext: string;
      try {
        plaintext = Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
      } catch {
        throw new DecryptionError('ciphertext failed authentication');
      }
      cache.set(ciphertext, aad, plaintext);
      return plaintext;
    },
    isStale(ciphertext) {
      return ciphertext.split('.')[1] !== currentKeyId;
    },
    forgetCached() {
      cache.clear();
    },
  };
}
