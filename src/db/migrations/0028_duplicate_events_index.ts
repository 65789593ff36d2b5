import type { Migration } from './helpers.js';

/**
 * Drops `events_object (organization_id, object_id)`, which 0012 added beside 0005's
 * `events_org_object_seq (organization_id, object_id, seq)`: every query that can use the first (an item's
 * timeline, erasure, GET /events?objectId) uses the second as well, and on SQLite both hold the same entries
 * (`seq` is the rowid every index entry ends with). It was only written: one more entry per event, and for an
 * event about an existing item (lead.updated) one more random index page per event at commit. Older releases
 * never name it.
 */
export const duplicateEventsIndex: Migration = {
  async up({ db }) {
    await db.schema.dropIndex('events_object').ifExists().execute();
  },
};
