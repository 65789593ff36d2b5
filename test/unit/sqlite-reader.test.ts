import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.js';
import { precompile } from '../../src/db/precompiled.js';

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

  it('moves its change counter on every commit, from this connection or another', async () => {
    const first = database.changeCounter!();
    expect(database.changeCounter!()).toBe(first);
    await database.transaction((trx) => sql`insert into organizations (id, name) values ('o2', 'Beta')`.execute(trx));
    const second = database.changeCounter!();
    expect(second).not.toBe(first);
    const other = openDatabase({ dialect: 'sqlite', url: join(dir, 'crm.db') });
    try {
      await sql`update organizations set name = 'Gamma' where id = 'o2'`.execute(other.db);
    } finally {
      await other.close();
    }
    expect(database.changeCounter!()).not.toBe(second);
    expect(await selectValue(database.db, 'o2')).toEqual([{ id: 'o2', name: 'Gamma' }]);
  });
});
