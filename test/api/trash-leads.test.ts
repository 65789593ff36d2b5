import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';

/** What the trash means for contact lookups and duplicate detection (leads and accounts). */
let t: TestApp;
let s: Seeded;

beforeAll(async () => {
  t = await buildTestApp();
  s = await seedOrg(t.ctx, { rateLimitPerMinute: 1_000_000 });
});
afterAll(() => t.close());

const post = async (path: string, key: string, body: unknown) => {
  const res = await call(t.app, 'POST', path, { auth: s.auth, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data[key];
};
const ids = async (path: string) => (await call(t.app, 'GET', path, { auth: s.auth })).body.data;

describe.each([
  { path: '/leads', key: 'lead', list: 'leads' },
  { path: '/accounts', key: 'account', list: 'accounts' },
])('exact lookups on $list', ({ path, key, list }) => {
  it('a trashed item is absent from e-mail and phone lookups, and back after restore', async () => {
    const item = await post(path, key, { name: 'Exact Match', email: `exact.${key}@example.com`, phoneNumber: '+14155550142' });
    await call(t.app, 'DELETE', `${path}/${item.id}`, { auth: s.auth });
    for (const q of [`exact.${key}@example.com`, '%2B14155550142']) {
      const data = await ids(`${path}?q=${q}`);
      expect(data[list], q).toEqual([]);
      expect(data.pagination.total, q).toBe(0);
    }
    await call(t.app, 'POST', `${path}/${item.id}/restore`, { auth: s.auth });
    for (const q of [`exact.${key}@example.com`, '%2B14155550142']) expect((await ids(`${path}?q=${q}`))[list].map((x: { id: string }) => x.id), q).toEqual([item.id]);
  });
});

describe('duplicate detection and the trash', () => {
  it('a trashed lead is no duplicate of a new one; restored, it is the duplicate of the newer live lead', async () => {
    const old = await post('/leads', 'lead', { name: 'First Ada', email: 'ada.dup@example.com' });
    await call(t.app, 'DELETE', `/leads/${old.id}`, { auth: s.auth });
    const newer = await post('/leads', 'lead', { name: 'Second Ada', email: 'ada.dup@example.com' });
    expect(newer.duplicateOf).toBeNull();
    const restored = await call(t.app, 'POST', `/leads/${old.id}/restore`, { auth: s.auth });
    expect(restored.body.data.lead).toMatchObject({ id: old.id, duplicateOf: newer.id, deletedAt: null });
    expect((await ids(`/leads/${old.id}`)).lead.duplicateOf).toBe(newer.id);
    const third = await post('/leads', 'lead', { name: 'Third Ada', phoneNumber: '+14155550111', email: 'ada.dup@example.com' });
    expect(third.duplicateOf).toBe(old.id);
  });

  it('a new lead with an e-mail and a phone is no duplicate of a trashed lead holding either', async () => {
    const byEmail = await post('/leads', 'lead', { name: 'Trashed by e-mail', email: 'pair.dup@example.com', phoneNumber: '+14155550177' });
    const byPhone = await post('/leads', 'lead', { name: 'Trashed by phone', phoneNumber: '+14155550178' });
    for (const lead of [byEmail, byPhone]) expect((await call(t.app, 'DELETE', `/leads/${lead.id}`, { auth: s.auth })).status).toBe(200);
    const both = await post('/leads', 'lead', { name: 'Pair', email: 'pair.dup@example.com', phoneNumber: '+14155550178' });
    expect(both.duplicateOf).toBeNull();
    const live = await post('/leads', 'lead', { name: 'Live phone', phoneNumber: '+14155550179' });
    expect((await post('/leads', 'lead', { name: 'Pair again', email: 'pair.dup@example.com', phoneNumber: '+14155550179' })).duplicateOf).toBe(both.id);
    expect((await post('/leads', 'lead', { name: 'Pair by phone', email: 'other.pair@example.com', phoneNumber: '+14155550179' })).duplicateOf).toBe(live.id);
  });

  it('a restored lead whose contacts nobody else holds keeps no duplicateOf', async () => {
    const lone = await post('/leads', 'lead', { name: 'Lone', email: 'lone@example.com' });
    await call(t.app, 'DELETE', `/leads/${lone.id}`, { auth: s.auth });
    expect((await call(t.app, 'POST', `/leads/${lone.id}/restore`, { auth: s.auth })).body.data.lead.duplicateOf).toBeNull();
  });

  it('a trashed account or lead cannot be referenced by a new deal', async () => {
    const account = await post('/accounts', 'account', { name: 'Trashed Co' });
    await call(t.app, 'DELETE', `/accounts/${account.id}`, { auth: s.auth });
    const res = await call(t.app, 'POST', '/deals', { auth: s.auth, body: { name: 'Orphan', accountId: account.id } });
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toEqual(['accountId']);
  });
});
