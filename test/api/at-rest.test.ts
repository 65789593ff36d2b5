import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { databaseText } from '../helpers/database-text.js';
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

describe('contact details and keys at rest', () => {
  it('the database holds no e-mail, phone (any notation) or API key in clear', async () => {
    const text = await databaseText(t);
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
