import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { call } from '../helpers/http.js';
import { eventually } from '../helpers/receiver.js';
import { seedOrg } from '../helpers/seed.js';
import { buildTestApp, dialect, type TestApp } from '../helpers/test-app.js';

/*
 * PostgreSQL only: the feed (and the webhook fan-out) take an event once no transaction that could still commit
 * behind it is running. Transaction ids are cluster-wide, but only this database's transactions can write its
 * outbox: a long transaction in another database of the same server must not hold the feed back, one in this
 * database must.
 */
let t: TestApp;
beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t?.close());

/** A session in `url` inside a transaction that holds a transaction id until `end()`. */
async function openTransaction(url: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('begin');
  await client.query('select pg_current_xact_id()');
  return { end: async () => { await client.query('rollback'); await client.end(); } };
}

const leadCreated = async (auth: Record<string, string>, id: string) => {
  const res = await call(t.app, 'GET', '/events?types=lead.created', { auth });
  expect(res.status).toBe(200);
  return res.body.data.events.some((e: { data: { id: string } }) => e.data.id === id);
};

describe.skipIf(dialect !== 'postgres')('the change feed\'s visibility horizon', () => {
  it('is not held back by a long transaction in another database of the server', async () => {
    const other = await openTransaction(process.env.TEST_DATABASE_URL!);
    try {
      const who = await seedOrg(t.ctx);
      const lead = (await call(t.app, 'POST', '/leads', { auth: who.auth, body: { name: 'Ada' } })).body.data.lead.id;
      await eventually(async () => expect(await leadCreated(who.auth, lead)).toBe(true), 20_000, 50);
    } finally {
      await other.end();
    }
  });

  it('is held back by an older transaction in this database until it ends', async () => {
    const who = await seedOrg(t.ctx);
    const older = await openTransaction(inject('pgRunUrl'));
    let lead: string;
    try {
      lead = (await call(t.app, 'POST', '/leads', { auth: who.auth, body: { name: 'Ada' } })).body.data.lead.id;
      // The open transaction began before the lead's: it could still commit an event behind it.
      expect(await leadCreated(who.auth, lead)).toBe(false);
    } finally {
      await older.end();
    }
    await eventually(async () => expect(await leadCreated(who.auth, lead)).toBe(true), 20_000, 50);
  });
});
