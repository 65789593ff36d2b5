import { sql } from 'kysely';
import type { Migration } from './helpers.js';

/** The channel instances LISTEN on; the payload is the schema whose rows changed (tests share a database). */
export const KEY_LOOKUP_CHANNEL = 'crm_key_lookup';

/**
 * PostgreSQL only: a commit that changes what authentication reads for a key — an API key other than its
 * last_used_at, an organization, a user — notifies every instance, whichever process made it (the API, the
 * console, `crm key revoke`, hand-written SQL), so their key lookup caches empty (db/change-feed.ts).
 * Statement-level triggers: a statement notifies once however many rows it touches, and PostgreSQL folds
 * identical notifications of one transaction into one. last_used_at is left out: it is written once a
 * minute per key and instance, and would otherwise empty every cache that often.
 */
/** The api_keys columns authentication reads (all but last_used_at and created_at). */
export const KEY_COLUMNS = ['id', 'organization_id', 'user_id', 'name', 'prefix', 'key_hash', 'scopes', 'rate_limit_per_minute', 'expires_at', 'revoked_at'];

export const keyLookupNotify: Migration = {
  async up({ db, dialect }) {
    if (dialect !== 'postgres') return;
    await sql`create or replace function crm_key_lookup_changed() returns trigger language plpgsql as $$
      begin
        perform pg_notify(${sql.lit(KEY_LOOKUP_CHANNEL)}, tg_table_schema);
        return null;
      end $$`.execute(db);
    const keyColumns = sql.raw(KEY_COLUMNS.join(', '));
    await sql`create trigger api_keys_key_lookup after update of ${keyColumns} or delete on api_keys
      for each statement execute function crm_key_lookup_changed()`.execute(db);
    for (const table of ['organizations', 'users']) {
      await sql`create trigger ${sql.raw(`${table}_key_lookup`)} after update or delete on ${sql.table(table)}
        for each statement execute function crm_key_lookup_changed()`.execute(db);
    }
  },
};
