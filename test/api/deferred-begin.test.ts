import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { roundTripsDuring } from '../helpers/pg-round-trips.js';
import { buildTestApp, dialect, type TestApp } from '../helpers/test-app.js';

/**
 * A transaction's `begin` travels with its first statement when that one has no parameters (db/deferred-begin.ts):
 * one round trip fewer, and nothing else different — the same rows, the same rollback on an error, nothing
 * left owed to the connection's next user.
 */
describe.runIf(dialect === 'postgres')('begin sent with the first statement (PostgreSQL)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
    await sql`create table deferred (id int primary key)`.execute(t.ctx.database.db);
  });
  afterAll(() => t.close());

  const ids = async () => (await sql<{ id: number }>`select id from deferred order by id`.execute(t.ctx.database.db)).rows.map((r) => r.id);
  /** What the next statement outside a transaction sends: its text alone, with no `begin` owed in front of it. */
  const nextStatementAlone = async () => expect((await roundTripsDuring(() => sql`select 1 as one`.execute(t.ctx.database.db))).sent).toEqual(['select 1 as one']);

  it('a first statement without parameters: begin and it in one round trip, its rows answered, then commit', async () => {
    const { result, sent } = await roundTripsDuring(() => t.ctx.database.transaction((trx) => sql<{ id: number }>`insert into deferred values (1) returning id`.execute(trx)));
    expect(result.rows).toEqual([{ id: 1 }]);
    expect(sent).toEqual(['begin; insert into deferred values (1) returning id', 'commit']);
    expect(await ids()).toEqual([1]);
    await nextStatementAlone();
  });

  it('a first statement with parameters: begin on its own before it, as Kysely sends it', async () => {
    const { sent } = await roundTripsDuring(() => t.ctx.database.transaction((trx) => sql`insert into deferred values (${2})`.execute(trx)));
    expect(sent).toEqual(['begin', '(extended)', 'commit']);
    expect(await ids()).toEqual([1, 2]);
    await nextStatementAlone();
  });

  it('a first statement that fails: the transaction rolls back, what ran before it in the same text too', async () => {
    const { result, sent } = await roundTripsDuring(() =>
      t.ctx.database.transaction((trx) => sql`insert into deferred values (3); insert into deferred values (1)`.execute(trx)).then(
        () => undefined,
        (err: { code?: string }) => err.code,
      ),
    );
    expect(result).toBe('23505');
    expect(sent).toEqual(['begin; insert into deferred values (3); insert into deferred values (1)', 'rollback']);
    expect(await ids()).toEqual([1, 2]);
    await nextStatementAlone();
  });

  it('a transaction that issues no statement sends nothing', async () => {
    const { result, sent } = await roundTripsDuring(() => t.ctx.database.transaction(async () => 'nothing'));
    expect({ result, sent }).toEqual({ result: 'nothing', sent: [] });
    await nextStatementAlone();
  });

  it('a text of several statements answers the last one’s rows', async () => {
    const { rows } = await sql<{ b: number }>`select 1 as a; select 2 as b`.execute(t.ctx.database.db);
    expect(rows).toEqual([{ b: 2 }]);
  });
});
