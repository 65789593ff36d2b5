import { randomBytes } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { createFieldCipher } from '../../src/crypto/field-cipher.js';
import { forgetEverywhere, forgetOnBroadcast, stopForgetting } from '../../src/crypto/plaintext-eviction.js';
import { eventually } from '../helpers/receiver.js';

describe('decryption caches after an erasure', () => {
  it('the erasing thread drops its cache, and every other listening cipher of the process drops its own', async () => {
    const keys = [randomBytes(32).toString('base64')];
    const here = createFieldCipher(keys, { cacheSize: 10 });
    const elsewhere = createFieldCipher(keys, { cacheSize: 10 });
    forgetOnBroadcast(elsewhere);
    const dropped = vi.spyOn(elsewhere, 'forgetCached');
    try {
      forgetEverywhere(here);
      await eventually(() => expect(dropped).toHaveBeenCalledTimes(1));
    } finally {
      stopForgetting(elsewhere);
    }
  });

  it('forgetCached empties the cache: a value is decrypted again afterwards', () => {
    const cipher = createFieldCipher([randomBytes(32).toString('base64')], { cacheSize: 10 });
    const ciphertext = cipher.encrypt('ada@example.com', 'aad');
    const decrypt = vi.spyOn(Buffer, 'concat');
    cipher.decrypt(ciphertext, 'aad');
    expect(decrypt).not.toHaveBeenCalled();
    cipher.forgetCached();
    cipher.decrypt(ciphertext, 'aad');
    expect(decrypt).toHaveBeenCalled();
    decrypt.mockRestore();
  });
});
