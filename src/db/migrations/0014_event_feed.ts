import { sql } from 'kysely';
import type { Migration } from './helpers.js';

/**
 * The change feed (GET /events) reads one organization's events in outbox order, which on PostgreSQL is
 * (txid, seq) (events/outbox-order.ts): this index makes a page an index range scan at any depth. SQLite's order
 * is seq, already served by events_org_seq.
 */
export const eventFeed: Migration = {
  async up({ db, dialect }) {
    if (dialect === 'postgres') await sql`create index events_org_txid_seq on events (organization_id, txid, seq)`.execute(db);
  },
};
