import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, type Database } from '../../src/db/database.js';

/** The SQLite group commit: transactions requested together share one COMMIT and still behave one by one. */
describe('group commit (SQLite)', () => {
  let database: Database;
  const values = async () => (await sql<{ v: string }>`select v from t order by v`.execute(database.db)).rows.map((r) => r.v);
  const insert = (v: string) => (trx: Parameters<Parameters<Database['transaction']>[0]>[0]) => sql`insert into t (v) values (${v})`.execute(trx);

  beforeEach(async () => {
    database = openDatabase({ dialect: 'sqlite', url: ':memory:' });
    await sql`create table parent (id text primary key)`.execute(database.db);
    await sql`create table t (v text not null unique, parent text references parent (id) deferrable initially deferred)`.execute(database.db);
  });
  afterEach(() => database.close());

  it('commits concurrent transactions together, each seeing the ones before it', async () => {
    const results = await Promise.all(
      ['a', 'b', 'c'].map((v) =>
        database.transaction(async (trx) => {
          const before = (await sql<{ n: number }>`select count(*) as n from t`.execute(trx)).rows[0]!.n;
          await insert(v)(trx);
          return `${v}:${before}`;
        }),
      ),
    );
    expect(results).toEqual(['a:0', 'b:1', 'c:2']);
    expect(await values()).toEqual(['a', 'b', 'c']);
  });

  it('rolls back only the transaction that failed, and rejects only its caller', async () => {
    const boom = new Error('boom');
    const outcomes = await Promise.allSettled([
      database.transaction(insert('a')),
      database.transaction(async (trx) => {
        await insert('b')(trx);
        throw boom;
      }),
      database.transaction(insert('a')), // unique violation: rolled back alone
      database.transaction(insert('c')),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toBe(boom);
    expect(await values()).toEqual(['a', 'c']);
  });

  it('rolls back a failing first transaction of a batch alone too; the ones queued behind it commit', async () => {
    const boom = new Error('boom');
    const outcomes = await Promise.allSettled([
      database.transaction(async (trx) => {
        await insert('x')(trx);
        throw boom;
      }),
      database.transaction(insert('y')),
      database.transaction(insert('z')),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'fulfilled', 'fulfilled']);
    expect(await values()).toEqual(['y', 'z']);
  });

  it('fails every transaction of the batch when the shared COMMIT fails, and answers none of them first', async () => {
    const outcomes = await Promise.allSettled([
      database.transaction(insert('a')),
      // A deferred foreign key is only checked at COMMIT: this makes the shared commit fail.
      database.transaction((trx) => sql`insert into t (v, parent) values ('orphan', 'missing')`.execute(trx)),
      database.transaction(insert('b')),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(await values()).toEqual([]);
    // The next batch is unaffected.
    await database.transaction(insert('d'));
    expect(await values()).toEqual(['d']);
  });

  it('keeps working for transactions that arrive while a batch is committing', async () => {
    const first = Promise.all(Array.from({ length: 50 }, (_, i) => database.transaction(insert(`x${String(i).padStart(3, '0')}`))));
    await new Promise((r) => setImmediate(r));
    const second = Promise.all(Array.from({ length: 50 }, (_, i) => database.transaction(insert(`y${String(i).padStart(3, '0')}`))));
    await Promise.all([first, second]);
    expect((await values()).length).toBe(100);
  });
});
