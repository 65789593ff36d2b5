import { randomBytes } from 'node:crypto';

/** Drawn once per process: 5 random bytes, and the start of a 3-byte counter. */
const processPart = randomBytes(5).toString('hex');
let counter = randomBytes(3).readUIntBE(0, 3);

/**
 * 24 lowercase hex characters in ObjectId's layout: 4 bytes of seconds since the epoch, 5 random bytes per
 * process, a 3-byte counter. Unique across every kind of resource and process; sortable by creation time and
 * increasing within a process, so a table's id index grows at its end instead of taking a write to a random
 * page per row (on SQLite a whole 4 KB WAL frame at every commit). Ids are not secrets: every lookup by id is
 * scoped to its organization, and tokens come from their own random bytes.
 */
export function newId(now: Date = new Date()): string {
  const seconds = Math.floor(now.getTime() / 1000);
  counter = (counter + 1) & 0xffffff;
  return seconds.toString(16).padStart(8, '0') + processPart + counter.toString(16).padStart(6, '0');
}

export const ID_PATTERN = '^[0-9a-f]{24}$';

export function isId(value: string): boolean {
  return /^[0-9a-f]{24}$/.test(value);
}
