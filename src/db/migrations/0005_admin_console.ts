import { notNull, type Migration } from './helpers.js';

/**
 * The admin console: browser sessions (only a hash of the cookie value is stored), sign-in throttling per
 * account and per IP, one-time first-run setup tokens, and indexes behind the dashboard's lead counts.
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

    await db.schema.createIndex('leads_org_status').on('leads').columns(['organization_id', 'status']).execute();
  },
};
