import { sql } from 'kysely';
import { notNull, withSeq, type Migration } from './helpers.js';

/**
 * Erasure and export (contract §7). Expand-only: new tables, one nullable column, indexes.
 * - `privacy_erasures`: the receipt of each erasure, holding the blind indexes of the value (never the value).
 * - `record_contacts`: the blind indexes of records' e-mail and phone fields (those live encrypted inside the
 *   records' JSON, where no index reaches), so an erasure finds records as it finds leads.
 * - `privacy_backfill`: records written before this migration are indexed on the first erasure or export
 *   (the keys that compute a blind index are not known to a migration); this row says up to which seq.
 * - `idempotency_keys.resource_id`: the resource a stored response describes, so an erasure removes it.
 * - indexes on events.object_id and webhook_deliveries.event_id: an erasure finds what names its items.
 */
export const privacy: Migration = {
  async up({ db, dialect }) {
    await withSeq(db.schema.createTable('privacy_erasures'), dialect)
      .addColumn('id', 'text', (c) => c.notNull().unique())
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('email_bidx', 'text')
      .addColumn('phone_bidx', 'text')
      .addColumn('reason', 'text')
      .addColumn('matched_leads', 'integer', notNull)
      .addColumn('matched_accounts', 'integer', notNull)
      .addColumn('matched_records', 'integer', notNull)
      .addColumn('actor', 'text', notNull)
      .addColumn('requested_at', 'text', notNull)
      .addColumn('completed_at', 'text', notNull)
      .execute();
    await db.schema.createIndex('privacy_erasures_org_seq').on('privacy_erasures').columns(['organization_id', 'seq']).execute();

    await db.schema
      .createTable('record_contacts')
      .addColumn('record_id', 'text', notNull)
      .addColumn('bidx', 'text', notNull)
      .addColumn('organization_id', 'text', notNull)
      .addPrimaryKeyConstraint('record_contacts_pk', ['record_id', 'bidx'])
      .execute();
    await db.schema.createIndex('record_contacts_bidx').on('record_contacts').columns(['bidx', 'organization_id']).execute();

    await db.schema
      .createTable('privacy_backfill')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('done_seq', 'bigint', notNull)
      .addColumn('upto_seq', 'bigint', notNull)
      .execute();
    // Only a database that already holds records has any to index.
    await sql`insert into privacy_backfill (name, done_seq, upto_seq) select 'record_contacts', 0, max(seq) from records having count(*) > 0`.execute(db);

    await db.schema.alterTable('idempotency_keys').addColumn('resource_id', 'text').execute();
    await db.schema.createIndex('idempotency_keys_resource').on('idempotency_keys').columns(['organization_id', 'resource_id']).execute();
    await db.schema.createIndex('events_object').on('events').columns(['organization_id', 'object_id']).execute();
    await db.schema.createIndex('webhook_deliveries_event').on('webhook_deliveries').columns(['event_id']).execute();
  },
};
