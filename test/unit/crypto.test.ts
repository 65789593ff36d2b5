import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createFieldCipher, DecryptionError } from '../../src/crypto/field-cipher.js';
import { createBlindIndex } from '../../src/crypto/blind-index.js';
import { createRequestHasher } from '../../src/crypto/request-hash.js';
import { generateApiKey, hashSecret, looksLikeApiKey } from '../../src/crypto/secrets.js';
import { hashPassword, verifyPassword } from '../../src/crypto/password.js';
import { cheapPasswordHash } from '../helpers/password-hash.js';

const k1 = randomBytes(32).toString('base64');
const k2 = randomBytes(32).toString('base64');

// Without and with the in-memory plaintext cache: a cached value must behave exactly like a decryption.
describe.each([0, 1_000])('field cipher (AES-256-GCM), plaintext cache of %i', (cacheSize) => {
  const cipher = createFieldCipher([k1], { cacheSize });

  it('round-trips any unicode text, with a fresh IV each time', () => {
    fc.assert(fc.property(fc.string({ unit: 'grapheme', maxLength: 300 }), fc.string({ maxLength: 40 }), (text, aad) => {
      const a = cipher.encrypt(text, aad);
      expect(cipher.decrypt(a, aad)).toBe(text);
      expect(cipher.encrypt(text, aad)).not.toBe(a);
    }));
  });

  it('does not contain the plaintext and names its key', () => {
    const c = cipher.encrypt('ada@example.com', 'leads:1:email');
    expect(c).not.toContain('ada');
    expect(c.split('.')[1]).toBe(cipher.currentKeyId);
  });

  it('detects tampering, a moved ciphertext (other AAD) and an unknown key', () => {
    const c = cipher.encrypt('ada@example.com', 'leads:1:email');
    const [v, id, body] = c.split('.');
    const raw = Buffer.from(body!, 'base64url');
    for (let i = 0; i < raw.length; i += 7) {
      const flipped = Buffer.from(raw);
      flipped[i]! ^= 0x01;
      expect(() => cipher.decrypt(`${v}.${id}.${flipped.toString('base64url')}`, 'leads:1:email')).toThrow(DecryptionError);
    }
    expect(cipher.decrypt(c, 'leads:1:email')).toBe('ada@example.com');
    expect(() => cipher.decrypt(c, 'leads:2:email')).toThrow(DecryptionError);
    expect(() => cipher.decrypt(c, 'leads:1:phone')).toThrow(DecryptionError);
    expect(() => createFieldCipher([k2]).decrypt(c, 'leads:1:email')).toThrow(DecryptionError);
    expect(() => cipher.decrypt('v1.abc', 'x')).toThrow(DecryptionError);
    expect(() => cipher.decrypt(`${v}.${id}.AAAA`, 'x')).toThrow(DecryptionError);
  });

  it('rotation: the new current key encrypts, retired keys still decrypt, stale values are recognised', () => {
    const old = createFieldCipher([k1]).encrypt('+14155550100', 'leads:9:phone');
    const rotated = createFieldCipher([k2, k1]);
    expect(rotated.decrypt(old, 'leads:9:phone')).toBe('+14155550100');
    expect(rotated.isStale(old)).toBe(true);
    const fresh = rotated.encrypt('+14155550100', 'leads:9:phone');
    expect(rotated.isStale(fresh)).toBe(false);
    expect(() => createFieldCipher([k1]).decrypt(fresh, 'leads:9:phone')).toThrow(DecryptionError);
  });

  it('refuses keys that are not 32 bytes', () => {
    expect(() => createFieldCipher([randomBytes(16).toString('base64')])).toThrow();
    expect(() => createFieldCipher([])).toThrow();
  });
});

describe('blind index', () => {
  const index = createBlindIndex(randomBytes(32));
  it('is deterministic per (kind, organization, value) and separates them', () => {
    const a = index.compute('email', 'org1', 'ada@example.com');
    expect(index.compute('email', 'org1', 'ada@example.com')).toBe(a);
    expect(index.compute('email', 'org2', 'ada@example.com')).not.toBe(a);
    expect(index.compute('phone', 'org1', 'ada@example.com')).not.toBe(a);
    expect(createBlindIndex(randomBytes(32)).compute('email', 'org1', 'ada@example.com')).not.toBe(a);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
  });
  it('has no collisions between distinct values (property)', () => {
    fc.assert(fc.property(fc.string(), fc.string(), (x, y) => {
      fc.pre(x !== y);
      expect(index.compute('email', 'o', x)).not.toBe(index.compute('email', 'o', y));
    }));
  });
  it('cannot be confused by separator injection', () => {
    expect(index.compute('email', 'a\u0000b', 'c')).not.toBe(index.compute('email', 'a', 'b\u0000c'));
  });
});

describe('idempotency request hash', () => {
  const key = randomBytes(32);
  const hasher = createRequestHasher(key);
  it('is an HMAC under a key of its own: deterministic, bound to organization and Idempotency-Key', () => {
    const a = hasher.hash('org1', 'k', 'POST /x\n{}');
    expect(createRequestHasher(key).hash('org1', 'k', 'POST /x\n{}')).toBe(a);
    expect(hasher.hash('org2', 'k', 'POST /x\n{}')).not.toBe(a);
    expect(hasher.hash('org1', 'k2', 'POST /x\n{}')).not.toBe(a);
    expect(hasher.hash('org1', 'k', 'POST /x\n{ }')).not.toBe(a);
    expect(createRequestHasher(randomBytes(32)).hash('org1', 'k', 'POST /x\n{}')).not.toBe(a);
    // Not the blind index of the same input under the same deployment key: a purpose of its own.
    expect(createBlindIndex(key).compute('email', 'org1', 'POST /x\n{}')).not.toBe(a);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
  });
  it('cannot be confused by separator injection', () => {
    expect(hasher.hash('a\u0000b', 'c', 'd')).not.toBe(hasher.hash('a', 'b\u0000c', 'd'));
    expect(hasher.hash('o', 'k:1', 'x')).not.toBe(hasher.hash('o', 'k', ':1x'));
  });
});

describe('API keys and passwords', () => {
  it('keys carry ≥160 random bits, a display prefix, and are stored as a hash', () => {
    const { key, prefix, hash } = generateApiKey();
    expect(looksLikeApiKey(key)).toBe(true);
    expect(key.startsWith(prefix)).toBe(true);
    expect(Buffer.from(key.slice(9), 'base64url').length * 8).toBeGreaterThanOrEqual(160);
    expect(hash).toBe(hashSecret(key));
    expect(hash).not.toContain(key.slice(9));
    // Stored hashes must keep matching across releases: SHA-256, hex (the FIPS 180-2 vector of "abc").
    expect(hashSecret('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(generateApiKey().key).not.toBe(key);
  });
  it('passwords verify with scrypt and fail otherwise', async () => {
    const stored = await hashPassword('correct horse battery');
    expect(stored).toMatch(/^scrypt\$32768\$8\$1\$/);
    expect(await verifyPassword('correct horse battery', stored)).toBe(true);
    expect(await verifyPassword('wrong horse battery', stored)).toBe(false);
    expect(await verifyPassword('x', 'garbage')).toBe(false);
  });
  it('verifies a password at the scrypt cost its hash names (older or cheaper hashes keep working)', async () => {
    const cheap = cheapPasswordHash('correct horse battery');
    expect(cheap).toMatch(/^scrypt\$1024\$/);
    expect(await verifyPassword('correct horse battery', cheap)).toBe(true);
    expect(await verifyPassword('wrong horse battery', cheap)).toBe(false);
  });
});
