import { notNull, type Migration } from './helpers.js';

/**
 * The admin console: browser sessions (only a hash of the cookie value is stored), sign-in throttling per
 * account and per IP, one-time first-run setup tokens, and indexes behind a record's history and the dashboard's counts.
 */
export const adminConsole: Migration = {
  async up({ db }) {
    await db.schema
      .createTable('admin_sessions')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('token_hash', 'text', (c) => c.notNull().unique())
      .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('csrf_token', 'text', notNull)
      .addColumn('ip', 'text', notNull)
      .addColumn('user_agent', 'text', notNull)
      .addColumn('created_at', 'text', notNull)
      .addColumn('last_seen_at', 'text', notNull)
      .addColumn('expires_at', 'text', notNull)
      .addColumn('absolute_expires_at', 'text', notNull)
      .execute();
    await db.schema.createIndex('admin_sessions_user').on('admin_sessions').columns(['user_id', 'expires_at']).execute();
    await db.schema.createIndex('admin_sessions_org').on('admin_sessions').columns(['organization_id', 'expires_at']).execute();

    await db.schema
      .createTable('admin_sign_in_throttle')
      .addColumn('key', 'text', (c) => c.primaryKey())
      .addColumn('failures', 'integer', notNull)
      .addColumn('last_failure_at', 'text', notNull)
      .addColumn('locked_until', 'text')
      .execute();

    await db.schema
      .createTable('admin_setup_tokens')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('created_at', 'text', notNull)
      .addColumn('expires_at', 'text', notNull)
      .addColumn('used_at', 'text')
      .execute();

    // Status first: an index led by organization_id would tempt SQLite's planner (no statistics) away from
    // leads_email/leads_phone when counting an exact-match search.
    // A record's history (newest first) without scanning the organization's whole event log.
    await db.schema.createIndex('events_org_object_seq').on('events').columns(['organization_id', 'object_id', 'seq']).execute();
    await db.schema.createIndex('leads_status_org').on('leads').columns(['status', 'organization_id']).execute();
  },
};
