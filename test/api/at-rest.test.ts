import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, dialect, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';

let t: TestApp;
let s: Seeded;
const EMAIL = 'very.secret.person@example.org';
const PHONE = '+14155550142';

beforeAll(async () => {
  t = await buildTestApp();
  s = await seedOrg(t.ctx);
  const created = await call(t.app, 'POST', '/leads', { auth: s.auth, body: { name: 'Secret Person', email: EMAIL, phoneNumber: '+1 415 555 0142' }, headers: { 'idempotency-key': 'at-rest-1' } });
  expect(created.status).toBe(201);
  await call(t.app, 'PATCH', `/leads/${created.body.data.lead.id}`, { auth: s.auth, body: { email: EMAIL.toUpperCase(), phoneNumber: PHONE } });
});
afterAll(() => t.close());

/** Everything the database holds, as text: the SQLite files (main, WAL) or every row of every table. */
async function databaseText(): Promise<string> {
  if (dialect === 'sqlite') {
    await sql`pragma wal_checkpoint(passive)`.execute(t.ctx.database.db);
    const dir = dirname(t.location);
    return readdirSync(dir).map((f) => readFileSync(join(dir, f)).toString('latin1')).join('\n');
  }
  const tables = await sql<{ table_name: string }>`select table_name from information_schema.tables where table_schema = ${t.location}`.execute(t.ctx.database.db);
  const dumps = await Promise.all(tables.rows.map(async ({ table_name }) => JSON.stringify((await sql`select * from ${sql.table(table_name)}`.execute(t.ctx.database.db)).rows)));
  return dumps.join('\n');
}

describe('contact details and keys at rest', () => {
  it('the database holds no e-mail, phone (any notation) or API key in clear', async () => {
    const text = await databaseText();
    expect(text).toContain('Secret Person');
    for (const needle of [EMAIL, EMAIL.toUpperCase(), PHONE, PHONE.slice(1), '415 555 0142', s.key, s.key.slice(9)]) {
      expect(text.includes(needle), needle).toBe(false);
    }
  });

  it('exact search still finds the lead through the blind index', async () => {
    const res = await call(t.app, 'GET', `/leads?q=${encodeURIComponent(EMAIL)}`, { auth: s.auth });
    expect(res.body.data.leads.map((l: { email: string }) => l.email)).toEqual([EMAIL]);
  });
});
