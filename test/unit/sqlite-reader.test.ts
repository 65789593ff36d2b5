import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { sql, type RawBuilder } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.js';
import { precompile } from '../../src/db/precompiled.js';
import SqliteDatabase from 'better-sqlite3';
import { readerOf, SqliteReader } from '../../src/db/sqlite-reader.js';
import { loadConfig } from '../../src/config.js';
import { closeContext, createContext, type AppContext } from '../../src/context.js';
import { createApiKey, createOrganization, createUser } from '../../src/modules/orgs/orgs.service.js';

/** Hot reads outside a transaction go to a read-only connection: committed data only, never a batch in flight. */
describe('SQLite reader connection', () => {
  let dir: string;
  let database: Database;
  // A compiled query the reader serves (the `leads` table is not needed: any table works).
  const selectValue = precompile((db, v: string) => db.selectFrom('organizations').select(['id', 'name']).where('id', '=', v));

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'crm-reader-'));
    database = openDatabase({ dialect: 'sqlite', url: join(dir, 'crm.db') });
    await sql`create table organizations (id text primary key, name text not null)`.execute(database.db);
  });
  afterEach(async () => {
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('does not see a transaction before its commit, and sees it right after', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let inserted!: () => void;
    const insertedSignal = new Promise<void>((resolve) => (inserted = resolve));
    const committed = database.transaction(async (trx) => {
      await sql`insert into organizations (id, name) values ('o1', 'Acme')`.execute(trx);
      inserted();
      await held;
    });
    await insertedSignal;
    expect(await selectValue(database.db, 'o1')).toEqual([]);
    release();
    await committed;
    expect(await selectValue(database.db, 'o1')).toEqual([{ id: 'o1', name: 'Acme' }]);
  });

  it('makes each row one object of every column, whatever their number and names', () => {
    const reader = readerOf(database.db)!;
    const names = [...Array.from({ length: 24 }, (_, i) => `c${i}`), 'it\'s "quoted"\\', 'two words'];
    const select = names.map((name, i) => `${i} as "${name.replaceAll('"', '""')}"`).join(', ');
    expect(reader.all(`select ${select}`, [])).toEqual([Object.fromEntries(names.map((name, i) => [name, i]))]);
  });

  it('before migration 0025, moves its change counter on every commit, from this connection or another', async () => {
    const first = database.changeCounter!();
    expect(database.changeCounter!()).toBe(first);
    await database.transaction((trx) => sql`insert into organizations (id, name) values ('o2', 'Beta')`.execute(trx));
    const second = database.changeCounter!();
    expect(second).not.toBe(first);
    await inAnotherProcess(dir, sql`update organizations set name = 'Gamma' where id = 'o2'`);
    database.requestStarted!();
    expect(database.changeCounter!()).not.toBe(second);
    expect(await selectValue(database.db, 'o2')).toEqual([{ id: 'o2', name: 'Gamma' }]);
  });
});

/** What `crm key revoke` or hand-written SQL does: a change through a connection of its own. */
async function inAnotherProcess(dir: string, statement: RawBuilder<unknown>): Promise<void> {
  const other = openDatabase({ dialect: 'sqlite', url: join(dir, 'crm.db') });
  try {
    await statement.execute(other.db);
  } finally {
    await other.close();
  }
}

/**
 * Migration 0025: the counter the key and definition caches read moves on changes to what they hold, and only
 * then, whoever commits them; a request reads it afresh as it starts.
 */
describe('SQLite cache version', () => {
  let dir: string;
  let database: Database;
  let ctx: AppContext;
  let keyId: string;
  let organizationId: string;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'crm-cache-version-'));
    ctx = await createContext(loadConfig({ DATABASE_URL: join(dir, 'crm.db'), ENCRYPTION_KEY: randomBytes(32).toString('base64'), LOG_LEVEL: 'silent' }, () => undefined));
    database = ctx.database;
    organizationId = (await createOrganization(ctx, { name: 'Acme', timezone: 'UTC' })).id;
    keyId = (await createApiKey(ctx, { organizationId, scopes: ['leads:read'], name: 'k' })).id;
    await createUser(ctx, { organizationId, email: 'ada@example.com', name: 'Ada' });
  });
  afterEach(async () => {
    await closeContext(ctx);
    rmSync(dir, { recursive: true, force: true });
  });

  /** The counter as the next request sees it. */
  const counter = () => {
    database.requestStarted!();
    return database.changeCounter!();
  };

  it('stays put through writes the caches do not hold: a lead, a key last used, a new key', async () => {
    const before = counter();
    await createLead(ctx, organizationId, 'Ada');
    await inAnotherProcess(dir, sql`update api_keys set last_used_at = '2026-11-25T00:00:00.000Z' where id = ${keyId}`);
    await createApiKey(ctx, { organizationId, scopes: ['leads:read'], name: 'another' });
    expect(counter()).toBe(before);
  });

  it.each([
    ['a revocation', sql`update api_keys set revoked_at = '2026-11-25T00:00:00.000Z' where id = ${'KEY'}`],
    ['a key deleted', sql`delete from api_keys where id = ${'KEY'}`],
    ['a new scope list', sql`update api_keys set scopes = '["leads:write"]' where id = ${'KEY'}`],
    ['an organization renamed', sql`update organizations set name = 'Beta'`],
    ['a user deactivated', sql`update users set deactivated_at = '2026-11-25T00:00:00.000Z'`],
    ['a custom field defined', sql`insert into builtin_fields (organization_id, resource, definition, created_at, updated_at) select id, 'leads', '{"fields":[],"stages":[]}', '', '' from organizations`],
    ['assignment rules set', sql`insert into assignment_rules (organization_id, rules, updated_at) select id, '[]', '' from organizations`],
  ])('moves on %s made by another process, for the next request', async (_what, statement) => {
    const before = counter();
    const compiled = statement.compile(database.db);
    await inAnotherProcess(dir, sql.raw(compiled.sql.replace('?', `'${keyId}'`)));
    expect(counter()).not.toBe(before);
  });

  it('moves for this process within the same request once it commits a change the caches hold', async () => {
    const before = counter();
    await database.transaction((trx) => sql`update organizations set name = 'Gamma'`.execute(trx));
    expect(database.changeCounter!()).not.toBe(before);
  });
});

async function createLead(ctx: AppContext, organizationId: string, name: string): Promise<void> {
  await ctx.database.transaction((trx) =>
    sql`insert into leads (id, organization_id, name, status, created_at, updated_at) values (${`lead-${name}`}, ${organizationId}, ${name}, 'NEW', '', '')`.execute(trx),
  );
}

/**
 * The read-only connection caches each statement's column names. SQLite prepares a statement again by itself
 * when another connection changed the schema, so a `select *` may come back with other columns than the ones
 * cached: the rows must carry the columns of the statement as it ran.
 */
describe('SqliteReader after another connection changed the schema', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const open = () => {
    dir = mkdtempSync(join(tmpdir(), 'crm-reader-'));
    const file = join(dir, 'crm.db');
    const writer = new SqliteDatabase(file);
    writer.pragma('journal_mode = WAL');
    writer.exec(`create table t (id integer primary key, a text, b text); insert into t values (1, 'A', 'B')`);
    return { writer, reader: new SqliteReader(new SqliteDatabase(file, { readonly: true })) };
  };

  it('labels a column added since the statement was first run', () => {
    const { writer, reader } = open();
    expect(reader.all('select * from t where id = ?', [1])).toEqual([{ id: 1, a: 'A', b: 'B' }]);
    writer.exec(`alter table t add column c text; update t set c = 'C'`);
    expect(reader.all('select * from t where id = ?', [1])).toEqual([{ id: 1, a: 'A', b: 'B', c: 'C' }]);
    reader.close();
    writer.close();
  });

  it('labels the columns of a table rebuilt with as many columns in another order, from the next request on', () => {
    const { writer, reader } = open();
    reader.changeVersion();
    expect(reader.all('select * from t where id = ?', [1])).toEqual([{ id: 1, a: 'A', b: 'B' }]);
    writer.exec(`alter table t drop column a; alter table t add column z text; update t set z = 'Z'`);
    // What a request does as it starts (Database.requestStarted, then the key cache's lookup).
    reader.forgetVersion();
    reader.changeVersion();
    expect(reader.all('select * from t where id = ?', [1])).toEqual([{ id: 1, b: 'B', z: 'Z' }]);
    reader.close();
    writer.close();
  });
});
