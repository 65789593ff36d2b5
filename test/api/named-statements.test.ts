import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { prepareOnConnections, useNamedStatements } from '../../src/db/named-statements.js';
import { buildTestApp, dialect, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';

/**
 * Hot statements are prepared once per PostgreSQL connection. A migration that adds a column while instances
 * run (a rolling upgrade) makes PostgreSQL refuse a `select *` prepared before it ("cached plan must not
 * change result type"); the connection prepares it again and the request still succeeds.
 */
describe.runIf(dialect === 'postgres')('named prepared statements (PostgreSQL)', () => {
  let t: TestApp;
  let a: Seeded;
  beforeAll(async () => {
    t = await buildTestApp();
    a = await seedOrg(t.ctx);
  });
  afterAll(() => t.close());

  it('a lead read prepared before a column was added still answers after it', async () => {
    const created = await call(t.app, 'POST', '/leads', { auth: a.auth, body: { name: 'Before the migration' } });
    const path = `/leads/${created.body.data.lead.id}`;
    // Sequential reads, each on an idle pooled connection: every one of them prepares the statement.
    for (let i = 0; i < 5; i++) expect((await call(t.app, 'GET', path, { auth: a.auth })).status).toBe(200);
    await sql`alter table leads add column added_later text`.execute(t.ctx.database.db);
    const after = await Promise.all(Array.from({ length: 8 }, () => call(t.app, 'GET', path, { auth: a.auth })));
    expect(after.map((r) => r.status)).toEqual(Array(8).fill(200));
  });
});

/**
 * A named statement's result is described once per connection (node-pg asks on every run by default): later
 * runs reuse the columns and parsers, with the same rows and types; a statement whose result changed shape
 * is prepared and described again.
 */
describe.runIf(dialect === 'postgres')('row descriptions reused per connection (PostgreSQL)', () => {
  let t: TestApp;
  let client: pg.Client;
  beforeAll(async () => {
    t = await buildTestApp();
    client = new pg.Client({ connectionString: t.ctx.config.database.url });
    await client.connect();
    useNamedStatements(client as unknown as pg.PoolClient);
    await client.query('create temporary table described (id int8 primary key, at timestamptz, doc jsonb)');
    await client.query(`insert into described values (1, '2026-01-02T03:04:05Z', '{"a":[1]}'), (2, null, null)`);
  });
  afterAll(async () => {
    await client?.end();
    await t.close();
  });

  it('describes the statement once, then answers the same rows with the same types', async () => {
    const text = 'select * from described where id <= $1 order by id';
    prepareOnConnections(text);
    const connection = (client as unknown as { connection: { describe(...args: unknown[]): void } }).connection;
    const describe = vi.spyOn(connection, 'describe');
    const runs = [];
    for (let i = 0; i < 4; i++) runs.push(await client.query(text, [2]));
    expect(describe).toHaveBeenCalledTimes(1);
    for (const run of runs) {
      expect(run.rows).toEqual([
        { id: 1, at: new Date('2026-01-02T03:04:05Z'), doc: { a: [1] } },
        { id: 2, at: null, doc: null },
      ]);
      expect(run.rowCount).toBe(2);
    }
    expect((await client.query(text, [0])).rows).toEqual([]);

    await client.query('alter table described add column note text');
    await client.query(`update described set note = 'after' where id = 1`);
    const after = await client.query(text, [1]);
    expect(after.rows).toEqual([{ id: 1, at: new Date('2026-01-02T03:04:05Z'), doc: { a: [1] }, note: 'after' }]);
    expect(describe).toHaveBeenCalledTimes(2);
    expect((await client.query(text, [1])).rows[0].note).toBe('after');
    expect(describe).toHaveBeenCalledTimes(2);

    // A value node-pg can't convert fails that call only; the connection and the statement go on serving.
    await expect(client.query(text, [{ big: 1n }])).rejects.toThrow(/BigInt/);
    expect((await client.query(text, [1])).rows[0].note).toBe('after');
    expect(describe).toHaveBeenCalledTimes(2);
  });
});
