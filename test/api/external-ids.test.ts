import { eventually } from '../helpers/receiver.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call, expectError } from '../helpers/http.js';

/** externalId on leads, accounts, deals and records (contract §8): set, clear, look up, unique with the trash, events. */
let t: TestApp;
let s: Seeded;

beforeAll(async () => {
  t = await buildTestApp();
  s = await seedOrg(t.ctx, { rateLimitPerMinute: 1_000_000 });
  const object = await call(t.app, 'POST', '/objects', { auth: s.auth, body: { slug: 'tickets', name: 'Ticket', fields: [{ key: 'title', label: 'Title', type: 'text', required: true }] } });
  expect(object.status, JSON.stringify(object.body)).toBe(201);
});
afterAll(() => t.close());

const kinds = [
  { path: '/leads', key: 'lead', list: 'leads', body: { name: 'Ada' } },
  { path: '/accounts', key: 'account', list: 'accounts', body: { name: 'Acme' } },
  { path: '/deals', key: 'deal', list: 'deals', body: { name: 'Big deal' } },
  { path: '/objects/tickets/records', key: 'record', list: 'records', body: { title: 'Broken' } },
];

describe.each(kinds)('externalId on $list', ({ path, key, list, body }) => {
  const create = (extra: Record<string, unknown>, who: Seeded = s) => call(t.app, 'POST', path, { auth: who.auth, body: { ...body, ...extra } });

  it('is set on create, found by ?externalId=, changed and cleared by PATCH, and named in the events', async () => {
    const res = await create({ externalId: `${key}-1` });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const item = res.body.data[key];
    expect(item.externalId).toBe(`${key}-1`);
    expect((await create({})).body.data[key].externalId).toBeNull();
    const found = await call(t.app, 'GET', `${path}?externalId=${key}-1`, { auth: s.auth });
    expect(found.body.data[list].map((x: { id: string }) => x.id)).toEqual([item.id]);
    expect(found.body.data.pagination.total).toBe(1);
    expect((await call(t.app, 'GET', `${path}?externalId=nobody`, { auth: s.auth })).body.data[list]).toEqual([]);
    const renamed = await call(t.app, 'PATCH', `${path}/${item.id}`, { auth: s.auth, body: { externalId: `${key}-1b` } });
    expect(renamed.body.data[key].externalId).toBe(`${key}-1b`);
    const cleared = await call(t.app, 'PATCH', `${path}/${item.id}`, { auth: s.auth, body: { externalId: null } });
    expect(cleared.body.data[key].externalId).toBeNull();
    await eventually(async () => {
      const feed = (await call(t.app, 'GET', '/events?limit=1000', { auth: s.auth })).body.data.events.filter((e: { data: { id: string } }) => e.data.id === item.id);
      expect(feed.map((e: { data: { changes: unknown } }) => e.data.changes)).toEqual([
        expect.objectContaining({ after: expect.objectContaining({ externalId: `${key}-1` }) }),
        { before: { externalId: `${key}-1` }, after: { externalId: `${key}-1b` } },
        { before: { externalId: `${key}-1b` }, after: { externalId: null } },
      ]);
    }, 20_000, 50);
  });

  it('is unique in the organization, the trash included: 409 EXTERNAL_ID_TAKEN on create and PATCH; free again once purged', async () => {
    const first = (await create({ externalId: `${key}-u` })).body.data[key];
    const errors = expectError(await create({ externalId: `${key}-u` }), 409, 'EXTERNAL_ID_TAKEN');
    expect(errors).toEqual([{ field: 'externalId', code: 'taken', message: expect.any(String) }]);
    const other = (await create({})).body.data[key];
    expectError(await call(t.app, 'PATCH', `${path}/${other.id}`, { auth: s.auth, body: { externalId: `${key}-u` } }), 409, 'EXTERNAL_ID_TAKEN');
    await call(t.app, 'DELETE', `${path}/${first.id}`, { auth: s.auth });
    expectError(await create({ externalId: `${key}-u` }), 409, 'EXTERNAL_ID_TAKEN');
    const trashed = await call(t.app, 'GET', `${path}?deleted=true&externalId=${key}-u`, { auth: s.auth });
    expect(trashed.body.data[list].map((x: { id: string }) => x.id)).toEqual([first.id]);
    expect((await call(t.app, 'GET', `${path}?externalId=${key}-u`, { auth: s.auth })).body.data[list]).toEqual([]);
    const restored = await call(t.app, 'POST', `${path}/${first.id}/restore`, { auth: s.auth });
    expect(restored.body.data[key].externalId).toBe(`${key}-u`);
    await call(t.app, 'DELETE', `${path}/${first.id}?permanent=true`, { auth: s.auth });
    expect((await create({ externalId: `${key}-u` })).status).toBe(201);
  });

  it('is per organization, refuses an empty or over-long value, and a batch upserts by it', async () => {
    const other = await seedOrg(t.ctx);
    if (key === 'record') await call(t.app, 'POST', '/objects', { auth: other.auth, body: { slug: 'tickets', name: 'Ticket', fields: [{ key: 'title', label: 'Title', type: 'text', required: true }] } });
    expect((await create({ externalId: `${key}-shared` })).status).toBe(201);
    expect((await create({ externalId: `${key}-shared` }, other)).status).toBe(201);
    for (const externalId of ['', 'x'.repeat(256), 42]) expectError(await create({ externalId }), 400, 'VALIDATION_FAILED');
    const res = await call(t.app, 'POST', `${path}/batch`, {
      auth: s.auth,
      body: { upsertBy: 'externalId', items: [{ ...body, externalId: `${key}-shared` }, { ...body, externalId: `${key}-new` }, { ...body, externalId: '' }] },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.results.map((r: { status: number }) => r.status)).toEqual([200, 201, 400]);
    expect(res.body.data.results[1][key]).toMatchObject({ externalId: `${key}-new` });
    const patched = await call(t.app, 'PATCH', `${path}/batch`, { auth: s.auth, body: { items: [{ id: res.body.data.results[1][key].id, externalId: `${key}-shared` }] } });
    expect(patched.body.data.results[0]).toMatchObject({ status: 409, error: { code: 'EXTERNAL_ID_TAKEN' } });
  });

  it('PATCH batch locks its rows: two batches at once with the same ifMatch on the same items, each item goes to exactly one', async () => {
    const items = [];
    for (let i = 0; i < 6; i++) items.push((await create({})).body.data[key]);
    // Without the batch's row lock, PostgreSQL lets both read the version ifMatch names before either writes.
    for (let round = 0; round < 3; round++) {
      const current = await Promise.all(items.map(async (x) => (await call(t.app, 'GET', `${path}/${x.id}`, { auth: s.auth })).body.data[key]));
      const batch = (side: string) => call(t.app, 'PATCH', `${path}/batch`, { auth: s.auth, body: { items: current.map((x, i) => ({ id: x.id, ifMatch: t.ctx.entityTagger.tagOf(x), externalId: `${key}-race-${side}${round}-${i}` })) } });
      const [a, b] = await Promise.all([batch('a'), batch('b')]);
      current.forEach((_, i) => expect([a.body.data.results[i].status, b.body.data.results[i].status].sort()).toEqual([200, 412]));
    }
  });
});

describe('records', () => {
  it('externalId is reserved: no field may take the name', async () => {
    const res = await call(t.app, 'POST', '/objects', { auth: s.auth, body: { slug: 'clash', name: 'Clash', fields: [{ key: 'externalId', label: 'X', type: 'text' }] } });
    expectError(res, 400, 'VALIDATION_FAILED');
  });
});
