import { createCipheriv, createDecipheriv, createHmac, createSecretKey, hkdfSync } from 'node:crypto';
import { randomBytesPooled } from '../lib/random.js';

/**
 * Seals the cursors the API hands out (list `nextCursor`, the change feed's, timelines'): AES-256-GCM, so a
 * client can neither read the position inside (a row's `seq` or a transaction id would count the writes of
 * every organization) nor make one up; a cursor bound to its purpose and organization (the AAD) opens nowhere
 * else. Every cursor has its own key, derived by HKDF from a random salt it carries: cursors are sealed on
 * every list request for the life of a deployment, more than random 96-bit GCM nonces under one key allow.
 *
 * The root is the deployment's blind-index key (blind-index-key.store.ts) under its own label: the same on
 * every instance, and untouched by encryption key rotation, so a cursor outlives a rotation.
 */
export interface CursorSeal {
  seal(purpose: CursorPurpose, organizationId: string, position: Buffer): string;
  /** The position sealed in `cursor` for this purpose and organization; null for anything else. */
  open(purpose: CursorPurpose, organizationId: string, cursor: string): Buffer | null;
}

export type CursorPurpose = 'list' | 'feed';

const VERSION = 1;
const SALT = 16;
const TAG = 16;
const HEADER = 1 + SALT + TAG;
const ONE = Buffer.of(1);

export function createCursorSeal(rootKey: Buffer): CursorSeal {
  const root = createSecretKey(Buffer.from(hkdfSync('sha512', rootKey, Buffer.alloc(0), 'crm cursor seal', 64)));
  // HKDF-Expand(root, info = salt) to 64 bytes, written out: it is one HMAC block (hkdfSync costs three times as much).
  const keyAndIv = (salt: Buffer) => createHmac('sha512', root).update(salt).update(ONE).digest();
  const aad = (purpose: CursorPurpose, organizationId: string) => Buffer.from(`${VERSION}:${purpose}:${organizationId}`);
  return {
    seal(purpose, organizationId, position) {
      const salt = randomBytesPooled(SALT);
      const k = keyAndIv(salt);
      const cipher = createCipheriv('aes-256-gcm', k.subarray(0, 32), k.subarray(32)).setAAD(aad(purpose, organizationId));
      const sealed = Buffer.concat([cipher.update(position), cipher.final()]);
      return Buffer.concat([Buffer.of(VERSION), salt, cipher.getAuthTag(), sealed]).toString('base64url');
    },
    open(purpose, organizationId, cursor) {
      const bytes = Buffer.from(cursor, 'base64url');
      if (bytes.length <= HEADER || bytes[0] !== VERSION || bytes.toString('base64url') !== cursor) return null;
      const k = keyAndIv(bytes.subarray(1, 1 + SALT));
      try {
        const decipher = createDecipheriv('aes-256-gcm', k.subarray(0, 32), k.subarray(32)).setAAD(aad(purpose, organizationId));
        decipher.setAuthTag(bytes.subarray(1 + SALT, HEADER));
        return Buffer.concat([decipher.update(bytes.subarray(HEADER)), decipher.final()]);
      } catch {
        return null;
      }
    },
  };
}
