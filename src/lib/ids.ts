import { randomBytesPooled } from './random.js';

/**
 * 24 lowercase hex characters, ObjectId-like: 4 bytes of seconds since the epoch, then 8 random bytes.
 * Unique across every kind of resource; roughly sortable by creation time.
 */
export function newId(now: Date = new Date()): string {
  const seconds = Math.floor(now.getTime() / 1000);
  return seconds.toString(16).padStart(8, '0') + randomBytesPooled(8).toString('hex');
}

export const ID_PATTERN = '^[0-9a-f]{24}$';

export function isId(value: string): boolean {
  return /^[0-9a-f]{24}$/.test(value);
}
