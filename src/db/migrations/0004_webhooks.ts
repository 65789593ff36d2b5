import { sql } from 'kysely';
import { notNull, withSeq, type Migration } from './helpers.js';

/**
 * Webhook endpoints, their durable deliveries (one per endpoint and event), every attempt, and the
 * dispatcher's fan-out cursor over the outbox.
 */
export const webhooks: Migration = {
  async up({ db, dialect }) {
    await withSeq(db.schema.createTable('webhook_endpoints'), dialect)
      .addColumn('id', 'text', (c) => c.notNull().unique())
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('url', 'text', notNull)
      .addColumn('description', 'text')
      .addColumn('events', 'text', notNull)
      .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('disabled_reason', 'text')
      .addColumn('failing_since', 'text')
      .addColumn('secret_enc', 'text', notNull)
      .addColumn('previous_secret_enc', 'text')
      .addColumn('previous_secret_expires_at', 'text')
      .addColumn('created_at', 'text', notNull)
      .addColumn('updated_at', 'text', notNull)
      .execute();
    await db.schema.createIndex('webhook_endpoints_org_seq').on('webhook_endpoints').columns(['organization_id', 'seq']).execute();

    await withSeq(db.schema.createTable('webhook_deliveries'), dialect)
      .addColumn('id', 'text', (c) => c.notNull().unique())
      .addColumn('organization_id', 'text', notNull)
      .addColumn('endpoint_id', 'text', (c) => c.notNull().references('webhook_endpoints.id').onDelete('cascade'))
      .addColumn('event_id', 'text', notNull)
      .addColumn('event_type', 'text', notNull)
      .addColumn('status', 'text', notNull)
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      // When the row next needs the dispatcher: the next attempt (pending) or the lease expiry (sending);
      // null once final, so the partial indexes below only hold live work.
      .addColumn('due_at', 'text')
      .addColumn('lease_token', 'text')
      .addColumn('error', 'text')
      .addColumn('created_at', 'text', notNull)
      .addColumn('updated_at', 'text', notNull)
      // Idempotent fan-out: a crash or a second worker can never create a second series for one event.
      .addUniqueConstraint('webhook_deliveries_endpoint_event', ['endpoint_id', 'event_id'])
      .execute();
    await db.schema.createIndex('webhook_deliveries_endpoint_seq').on('webhook_deliveries').columns(['endpoint_id', 'seq']).execute();
    await db.schema
      .createIndex('webhook_deliveries_due')
      .on('webhook_deliveries')
      .columns(['due_at', 'endpoint_id'])
      .where(sql.ref('due_at'), 'is not', null)
      .execute();
    await db.schema
      .createIndex('webhook_deliveries_endpoint_due')
      .on('webhook_deliveries')
      .columns(['endpoint_id', 'due_at'])
      .where(sql.ref('due_at'), 'is not', null)
      .execute();
    await db.schema.createIndex('webhook_deliveries_created').on('webhook_deliveries').columns(['created_at']).execute();

    await withSeq(db.schema.createTable('webhook_attempts'), dialect)
      .addColumn('delivery_id', 'text', (c) => c.notNull().references('webhook_deliveries.id').onDelete('cascade'))
      .addColumn('attempt', 'integer', notNull)
      .addColumn('started_at', 'text', notNull)
      .addColumn('duration_ms', 'integer', notNull)
      .addColumn('response_status', 'integer')
      .addColumn('response_excerpt', 'text')
      .addColumn('error', 'text')
      .addColumn('succeeded', 'integer', notNull)
      .execute();
    await db.schema.createIndex('webhook_attempts_delivery').on('webhook_attempts').columns(['delivery_id', 'seq']).execute();

    await db.schema
      .createTable('webhook_dispatch_state')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('last_seq', 'bigint', notNull)
      .addColumn('last_txid', 'text', notNull)
      .addColumn('updated_at', 'text', notNull)
      .execute();

    if (dialect === 'postgres') {
      // PostgreSQL hands out `seq` values before commit, so a later seq can commit first: a cursor on seq
      // alone would skip the earlier one. Each event also records its transaction id, and the dispatcher
      // only reads events of transactions older than every running one (see dispatcher.store.ts).
      await sql`alter table events add column txid xid8 not null default pg_current_xact_id()`.execute(db);
      await sql`create index events_txid_seq on events (txid, seq)`.execute(db);
      // Existing events were written before any endpoint existed: start after them.
      await sql`insert into webhook_dispatch_state (name, last_seq, last_txid, updated_at)
        select 'fanout', coalesce(max(seq), 0), pg_current_xact_id()::text, ${new Date().toISOString()} from events`.execute(db);
    } else {
      await sql`insert into webhook_dispatch_state (name, last_seq, last_txid, updated_at)
        select 'fanout', coalesce(max(seq), 0), '0', ${new Date().toISOString()} from events`.execute(db);
    }
  },
};
