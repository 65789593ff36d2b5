import { sql } from 'kysely';
import type { Migration } from './helpers.js';
import { KEY_COLUMNS } from './0013_key_lookup_notify.js';

/**
 * SQLite only: the counterpart of migration 0013's notifications. `cache_version` holds one number that every
 * change to what the per-process caches hold moves — an API key other than its last_used_at, an organization,
 * a user (the key lookup), a built-in resource's custom fields (the definition cache), an organization's
 * assignment rules (rules.service.ts cachedRules) — whichever process or
 * connection makes it. The caches read it (db/sqlite-reader.ts) instead of `data_version`, which moves on
 * every commit: under a stream of writes that emptied them on every request, and each write then read its key
 * and its organization's definitions from the database again.
 */
export const sqliteCacheVersion: Migration = {
  async up({ db, dialect }) {
    if (dialect !== 'sqlite') return;
    await sql`create table cache_version (id integer primary key check (id = 1), version integer not null)`.execute(db);
    await sql`insert into cache_version (id, version) values (1, 0)`.execute(db);
    const bump = sql.raw('begin update cache_version set version = version + 1 where id = 1; end');
    const triggers: [string, string][] = [
      ['api_keys_cache_update', `after update of ${KEY_COLUMNS.join(', ')} on api_keys`],
      ['api_keys_cache_delete', 'after delete on api_keys'],
      ['organizations_cache_update', 'after update on organizations'],
      ['organizations_cache_delete', 'after delete on organizations'],
      ['users_cache_update', 'after update on users'],
      ['users_cache_delete', 'after delete on users'],
      ['builtin_fields_cache_insert', 'after insert on builtin_fields'],
      ['builtin_fields_cache_update', 'after update on builtin_fields'],
      ['builtin_fields_cache_delete', 'after delete on builtin_fields'],
      ['assignment_rules_cache_insert', 'after insert on assignment_rules'],
      ['assignment_rules_cache_update', 'after update on assignment_rules'],
      ['assignment_rules_cache_delete', 'after delete on assignment_rules'],
    ];
    for (const [name, when] of triggers) await sql`create trigger ${sql.raw(name)} ${sql.raw(when)} ${bump}`.execute(db);
  },
};
