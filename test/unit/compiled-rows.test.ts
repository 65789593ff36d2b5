import { sql, type Kysely } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.js';
import { compiledForRows } from '../../src/db/compiled-rows.js';
import type { DB } from '../../src/db/schema.js';

/** Statements compiled once per chunk size: every row lands once, with its own values, whatever the count. */
describe('compiledForRows', () => {
  let database: Database;
  type Row = { k: number; v: string | null };
  const insertRows = (db: Kysely<DB>, rows: Row[]) => {
    const query = sql<{ k: number }>`insert into t (k, v) values ${sql.join(rows.map((r) => sql`(${r.k}, ${r.v})`))} returning k`;
    return { compile: () => query.compile(db) };
  };
  const insert = compiledForRows(['k', 'v'] as const, insertRows);
  const insertInFives = compiledForRows(['k', 'v'] as const, insertRows, [5, 1]);
  const stored = async () => (await sql<Row>`select k, v from t order by k`.execute(database.db)).rows;

  beforeEach(async () => {
    database = openDatabase({ dialect: 'sqlite', url: ':memory:' });
    await sql`create table t (k integer primary key, v text)`.execute(database.db);
  });
  afterEach(() => database.close());

  it('chunk sizes of the caller: 12 rows as 5, 5, 1, 1', async () => {
    const rows = Array.from({ length: 12 }, (_, k) => ({ k, v: `v${k}` }));
    expect((await insertInFives(database.db, rows)).map((r) => r.k)).toEqual(rows.map((r) => r.k));
    expect(await stored()).toEqual(rows);
  });

  for (const count of [0, 1, 2, 9, 64, 73, 150]) {
    it(`${count} rows`, async () => {
      const rows = Array.from({ length: count }, (_, k) => ({ k, v: k % 3 === 0 ? null : `v${k}` }));
      const returned = await insert(database.db, rows);
      expect(returned.map((r) => r.k)).toEqual(rows.map((r) => r.k));
      expect(await stored()).toEqual(rows);
    });
  }
});
