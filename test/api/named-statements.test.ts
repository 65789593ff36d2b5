import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
