import type { Database } from '../../db/database.js';
import { FifoMap } from '../../lib/fifo-map.js';

/** Enough for every key that calls within one quiet period; the oldest entry leaves first. */
const CAPACITY = 1_000;

/**
 * What authentication reads for a key (by key hash), kept only while the database is unchanged. Each lookup
 * first reads the database's change counter (on SQLite a row the key tables' triggers move, migration 0025;
 * on PostgreSQL a number moved by LISTEN/NOTIFY, db/change-feed.ts); any change — a revocation through the API, the console
 * or `crm key revoke` in another process, a rename — empties the cache, so a revoked key answers 401 on the
 * very next request. Without a change counter (PostgreSQL behind a transaction-mode pooler) every lookup
 * reads the database. Expiry is the caller's to check on every request.
 */
export class KeyLookupCache<T extends object> {
  private readonly entries = new FifoMap<string, T>(CAPACITY);
  private version: number | undefined;

  constructor(private readonly database: Pick<Database, 'changeCounter'>) {}

  /** The entry for `hash` if the cache holds it and the database is unchanged; nothing is loaded. */
  peek(hash: string): T | undefined {
    if (!this.database.changeCounter) return undefined;
    const version = this.database.changeCounter();
    if (version !== this.version) {
      this.entries.clear();
      this.version = version;
    }
    return this.entries.get(hash);
  }

  async lookup(hash: string, load: () => Promise<T | undefined>): Promise<T | undefined> {
    const hit = this.peek(hash);
    if (hit !== undefined) return hit;
    const version = this.version;
    const value = await load();
    // Read after the counter: if a commit came in between, the counter has moved and the entry is dropped.
    if (value !== undefined && this.database.changeCounter && this.version === version) {
      this.entries.set(hash, value);
    }
    return value;
  }
}
