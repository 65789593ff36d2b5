import { randomBytesPooled } from './random.js';

/**
 * 24 lowercase hex characters: 4 bytes of seconds since the epoch (ObjectId's time prefix), then 10 bits of
 * the millisecond and 54 random bits. Sortable by creation time (to the millisecond of the clock that made
 * them), so a table's id index grows at its end instead of taking a write to a random page per row (on SQLite
 * a whole 4 KB WAL frame at every commit); ids made in the same millisecond (a batch) land together there, in
 * random order. Nothing after the time is sequential: ids drawn one after another tell nothing of how many
 * others (of any organization) were made between them. 54 bits per millisecond keep them unique (a million
 * ids in one millisecond collide with odds of 1 in 36,000). Ids are not secrets: every lookup by id is scoped
 * to its organization, and tokens come from their own random bytes.
 */
export function newId(now: Date = new Date()): string {
  const ms = now.getTime();
  const seconds = Math.floor(ms / 1000);
  const millis = ms - seconds * 1000;
  const tail = randomBytesPooled(8);
  tail[0] = millis >> 2;
  tail[1] = ((millis & 3) << 6) | (tail[1]! & 0x3f);
  return seconds.toString(16).padStart(8, '0') + tail.toString('hex');
}

export const ID_PATTERN = '^[0-9a-f]{24}$';

export function isId(value: string): boolean {
  return /^[0-9a-f]{24}$/.test(value);
}
