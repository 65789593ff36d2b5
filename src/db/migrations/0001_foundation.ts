import { sql } from 'kysely';
import { notNull, withSeq, type Migration } from './helpers.js';

/** Organizations, users, API keys, idempotency, leads with their substring index, assignment rules, the outbox. */
export const foundation: Migration = {
  async up({ db, dialect }) {
    await db.schema
      .createTable('organizations')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', notNull)
      .addColumn('timezone', 'text', notNull)
      .addColumn('created_at', 'text', notNull)
      .addColumn('updated_at', 'text', notNull)
      .execute();

    await db.schema
      .createTable('users')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('name', 'text', notNull)
      .addColumn('email_enc', 'text', notNull)
      .addColumn('email_bidx', 'text', (c) => c.notNull().unique())
      .addColumn('password_hash', 'text')
      .addColumn('is_admin', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'text', notNull)
      .addColumn('updated_at', 'text', notNull)
      .execute();
    await db.schema.createIndex('users_org').on('users').columns(['organization_id']).execute();

    await db.schema
      .createTable('api_keys')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('user_id', 'text', (c) => c.references('users.id'))
      .addColumn('name', 'text', notNull)
      .addColumn('prefix', 'text', notNull)
      .addColumn('key_hash', 'text', (c) => c.notNull().unique())
      .addColumn('scopes', 'text', notNull)
      .addColumn('rate_limit_per_minute', 'integer')
      .addColumn('expires_at', 'text')
      .addColumn('revoked_at', 'text')
      .addColumn('last_used_at', 'text')
      .addColumn('created_at', 'text', notNull)
      .execute();
    await db.schema.createIndex('api_keys_org').on('api_keys').columns(['organization_id']).execute();

    await db.schema
      .createTable('idempotency_keys')
      .addColumn('organization_id', 'text', notNull)
      .addColumn('key', 'text', notNull)
      .addColumn('request_hash', 'text', notNull)
      .addColumn('state', 'text', notNull)
      .addColumn('response_status', 'integer')
      .addColumn('response_body', 'text')
      .addColumn('locked_until', 'text', notNull)
      .addColumn('created_at', 'text', notNull)
      .addColumn('expires_at', 'text', notNull)
      .addPrimaryKeyConstraint('idempotency_keys_pk', ['organization_id', 'key'])
      .execute();
    await db.schema.createIndex('idempotency_keys_expiry').on('idempotency_keys').columns(['expires_at']).execute();

    await withSeq(db.schema.createTable('leads'), dialect)
      .addColumn('id', 'text', (c) => c.notNull().unique())
      .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id'))
      .addColumn('name', 'text', notNull)
      .addColumn('email_enc', 'text')
      .addColumn('email_bidx', 'text')
      .addColumn('phone_enc', 'text')
      .addColumn('phone_bidx', 'text')
      .addColumn('source', 'text')
      .addColumn('source_campaign', 'text')
      .addColumn('status', 'text', notNull)
      .addColumn('company', 'text')
      .addColumn('title', 'text')
      .addColumn('notes', 'text')
      .addColumn('owner_id', 'text')
      .addColumn('account_id', 'text')
      .addColumn('duplicate_of', 'text')
      .addColumn('created_at', 'text', notNull)
      .addColumn('updated_at', 'text', notNull)
      .execute();
    await db.schema.createIndex('leads_org_seq').on('leads').columns(['organization_id', 'seq']).execute();
    await db.schema.createIndex('leads_email').on('leads').columns(['email_bidx', 'seq']).execute();
    await db.schema.createIndex('leads_phone').on('leads').columns(['phone_bidx', 'seq']).execute();
    await createSubstringIndex(db, dialect, 'leads', 'name');

    await db.schema
      .createTable('assignment_rules')
      .addColumn('organization_id', 'text', (c) => c.primaryKey().references('organizations.id'))
      .addColumn('rules', 'text', notNull)
      .addColumn('updated_at', 'text', notNull)
      .execute();
    await db.schema
      .createTable('round_robin_cursors')
      .addColumn('organization_id', 'text', notNull)
      .addColumn('rule_id', 'text', notNull)
      .addColumn('position', 'integer', (c) => c.notNull().defaultTo(0))
      .addPrimaryKeyConstraint('round_robin_cursors_pk', ['organization_id', 'rule_id'])
      .execute();

    await withSeq(db.schema.createTable('events'), dialect)
      .addColumn('id', 'text', (c) => c.notNull().unique())
      .addColumn('organization_id', 'text', notNull)
      .addColumn('type', 'text', notNull)
      .addColumn('object', 'text', notNull)
      .addColumn('object_id', 'text', notNull)
      .addColumn('payload', 'text', notNull)
      .addColumn('created_at', 'text', notNull)
      .execute();
    await db.schema.createIndex('events_org_seq').on('events').columns(['organization_id', 'seq']).execute();

    await db.schema
      .createTable('system_secrets')
      .addColumn('name', 'text', (c) => c.primaryKey())
      .addColumn('value_enc', 'text', notNull)
      .addColumn('created_at', 'text', notNull)
      .execute();
  },
};

/**
 * Case-insensitive substring search on `column` of `table`: an external-content FTS5 trigram table kept in
 * step by triggers on SQLite, a pg_trgm GIN index on PostgreSQL. Exported for later migrations' tables.
 */
export async function createSubstringIndex(
  db: MigrationContextDb,
  dialect: 'sqlite' | 'postgres',
  table: string,
  column: string,
): Promise<void> {
  if (dialect === 'postgres') {
    await sql`create extension if not exists pg_trgm`.execute(db);
    await sql`create index ${sql.raw(`${table}_${column}_trgm`)} on ${sql.table(table)} using gin (${sql.ref(column)} gin_trgm_ops)`.execute(db);
    return;
  }
  const fts = `${table}_fts`;
  await sql.raw(`create virtual table ${fts} using fts5(${column}, content='${table}', content_rowid='seq', tokenize='trigram')`).execute(db);
  await sql.raw(`create trigger ${table}_fts_ai after insert on ${table} begin
      insert into ${fts}(rowid, ${column}) values (new.seq, new.${column}); end`).execute(db);
  await sql.raw(`create trigger ${table}_fts_ad after delete on ${table} begin
      insert into ${fts}(${fts}, rowid, ${column}) values ('delete', old.seq, old.${column}); end`).execute(db);
  await sql.raw(`create trigger ${table}_fts_au after update of ${column} on ${table} begin
      insert into ${fts}(${fts}, rowid, ${column}) values ('delete', old.seq, old.${column});
      insert into ${fts}(rowid, ${column}) values (new.seq, new.${column}); end`).execute(db);
}

type MigrationContextDb = Parameters<Migration['up']>[0]['db'];
