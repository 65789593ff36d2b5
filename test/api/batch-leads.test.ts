import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../../src/modules/events/outbox.store.js';
import { roundTripsDuring } from '../helpers/pg-round-trips.js';
import { buildTestApp, dialect, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call, expectError } from '../helpers/http.js';

/** POST/PATCH /leads/batch (contract §8): per-item results, atomicity with events, upserts, ifMatch. */
let t: TestApp;
let s: Seeded;

beforeAll(async () => {
  t = await buildTestApp();
  s = await seedOrg(t.ctx, { rateLimitPerMinute: 1_000_000 });
});
afterAll(() => t.close());

const batch = (body: unknown, who: Seeded = s, headers: Record<string, string> = {}) => call(t.app, 'POST', '/leads/batch', { auth: who.auth, body, headers });
const patch = (body: unknown, who: Seeded = s) => call(t.app, 'PATCH', '/leads/batch', { auth: who.auth, body });
const create = async (body: Record<string, unknown>, who: Seeded = s) => (await call(t.app, 'POST', '/leads', { auth: who.auth, body })).body.data.lead;

/** Every event of the organization so far, from the change feed. */
/**
 * The organization's committed events, read from the outbox: the feed (GET /events) shows them only once every
 * older transaction of the database has ended, which other test files' work can delay on PostgreSQL.
 */
async function events(who: Seeded) {
  return (await listEvents(t.ctx.database.db, who.orgId)) as unknown as { type: string; data: { id: string; changes: { after: Record<string, unknown> } } }[];
}

describe('POST /leads/batch', () => {
  it('answers one result per item, in order: created, invalid, external id taken, upsert hit, ifMatch mismatch', async () => {
    const o = await seedOrg(t.ctx);
    const existing = await create({ name: 'Grace Hopper', email: 'grace@example.com', externalId: 'ext-grace' }, o);
    const stale = await create({ name: 'Stale Version', email: 'stale@example.com' }, o);
    const res = await batch(
      {
        upsertBy: 'email',
        items: [
          { name: 'New One', email: 'new.one@example.com', externalId: 'ext-new' },
          { name: '', email: 'not-an-email', bogus: 1 },
          { name: 'Taken Id', email: 'taken@example.com', externalId: 'ext-grace' },
          { name: 'Grace B. Hopper', email: 'GRACE@example.com', title: 'Rear Admiral' },
          { name: 'Stale Write', email: 'stale@example.com', ifMatch: '"not-the-tag"' },
          'not an object',
        ],
      },
      o,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const results = res.body.data.results;
    expect(results.map((r: { index: number; status: number }) => [r.index, r.status])).toEqual([[0, 201], [1, 400], [2, 409], [3, 200], [4, 412], [5, 400]]);
    expect(results[0].lead).toMatchObject({ name: 'New One', email: 'new.one@example.com', externalId: 'ext-new' });
    expect(results[1].error.code).toBe('VALIDATION_FAILED');
    expect(results[1].error.errors.map((e: { field: string }) => e.field).sort()).toEqual(['bogus', 'email', 'name']);
    expect(results[1].lead).toBeUndefined();
    expect(results[2].error).toMatchObject({ code: 'EXTERNAL_ID_TAKEN', errors: [{ field: 'externalId', code: 'taken' }] });
    expect(results[3].lead).toMatchObject({ id: existing.id, name: 'Grace B. Hopper', title: 'Rear Admiral', externalId: 'ext-grace' });
    expect(results[4].error.code).toBe('PRECONDITION_FAILED');
    expect(results[4].lead).toEqual(stale);

    const seen = await events(o);
    const created = seen.filter((e) => e.type === 'lead.created').map((e) => e.data.id);
    expect(created).toEqual([existing.id, stale.id, results[0].lead.id]);
    const updated = seen.filter((e) => e.type === 'lead.updated');
    expect(updated.map((e) => e.data.id)).toEqual([existing.id]);
    expect(updated[0]!.data.changes.after).toEqual({ name: 'Grace B. Hopper', title: 'Rear Admiral' });
    const list = await call(t.app, 'GET', '/leads?limit=100', { auth: o.auth });
    expect(list.body.data.pagination.total).toBe(3);
  });

  it('an item with the right ifMatch updates the holder; an upsert by externalId updates it, a trashed holder is 409', async () => {
    const o = await seedOrg(t.ctx);
    const lead = await create({ name: 'Ada', externalId: 'a-1' }, o);
    const gone = await create({ name: 'Gone', externalId: 'a-2' }, o);
    await call(t.app, 'DELETE', `/leads/${gone.id}`, { auth: o.auth });
    const res = await batch({ upsertBy: 'externalId', items: [{ name: 'Ada L.', externalId: 'a-1', ifMatch: t.ctx.entityTagger.tagOf(lead) }, { name: 'Back?', externalId: 'a-2' }, { name: 'No key' }] }, o);
    expect(res.body.data.results.map((r: { status: number }) => r.status)).toEqual([200, 409, 400]);
    expect(res.body.data.results[0].lead).toMatchObject({ id: lead.id, name: 'Ada L.' });
    expect(res.body.data.results[2].error.errors).toEqual([{ field: 'externalId', code: 'required', message: expect.any(String) }]);
  });

  it('an ifMatch with no item to compare it with is 412 whose message says so, not that the current lead is returned', async () => {
    const o = await seedOrg(t.ctx);
    const upsert = await batch({ upsertBy: 'externalId', items: [{ name: 'Gone', externalId: 'ext-gone', ifMatch: '*' }] }, o);
    expect(upsert.body.data.results).toEqual([
      { index: 0, status: 412, error: { code: 'PRECONDITION_FAILED', message: 'ifMatch names a version, but no lead holds this externalId: nothing was written (send the item without ifMatch to create it)' } },
    ]);
    const plain = await batch({ items: [{ name: 'Plain', ifMatch: '"abc"' }] }, o);
    expect(plain.body.data.results[0]).toEqual({
      index: 0,
      status: 412,
      error: { code: 'PRECONDITION_FAILED', message: 'ifMatch names a version, but without upsertBy an item only creates: nothing was written (send upsertBy to update the holder of a key)' },
    });
    expect(await events(o)).toEqual([]);
  });

  it('items of one batch upserting the same new key: the first creates, the later ones update it', async () => {
    const o = await seedOrg(t.ctx);
    const res = await batch({ upsertBy: 'email', items: [{ name: 'One', email: 'same@example.com' }, { name: 'Two', email: 'same@example.com', company: 'Acme' }] }, o);
    const [first, second] = res.body.data.results;
    expect([first.status, second.status]).toEqual([201, 200]);
    expect(second.lead).toMatchObject({ id: first.lead.id, name: 'Two', company: 'Acme' });
    const seen = await events(o);
    expect(seen.map((e) => e.type)).toEqual(['lead.created', 'lead.updated']);
  });

  it('items of one batch naming one existing lead (upsert key or PATCH id): applied in order, each event\'s before the previous after', async () => {
    const o = await seedOrg(t.ctx);
    const lead = await create({ name: 'Once', email: 'twice@example.com', title: 'T0' }, o);
    const up = await batch({ upsertBy: 'email', items: [{ name: 'Once', email: 'twice@example.com', title: 'T1' }, { name: 'Once', email: 'TWICE@example.com', title: 'T2', ifMatch: t.ctx.entityTagger.tagOf(lead) }, { name: 'Once', email: 'twice@example.com', title: 'T3' }] }, o);
    expect(up.body.data.results.map((r: { status: number }) => r.status)).toEqual([200, 412, 200]);
    expect(up.body.data.results[1].lead).toMatchObject({ id: lead.id, title: 'T1' });
    const patched = await patch({ items: [{ id: lead.id, title: 'T4' }, { id: lead.id, title: 'T5', ifMatch: t.ctx.entityTagger.tagOf(up.body.data.results[2].lead) }, { id: lead.id, status: 'CONTACTED' }] }, o);
    expect(patched.body.data.results.map((r: { status: number }) => r.status)).toEqual([200, 412, 200]);
    expect(patched.body.data.results[2].lead).toMatchObject({ title: 'T4', status: 'CONTACTED' });
    const updates = (await events(o)).filter((e) => e.type === 'lead.updated').map((e) => (e.data as unknown as { changes: { before: object; after: object } }).changes);
    expect(updates).toEqual([
      { before: { title: 'T0' }, after: { title: 'T1' } },
      { before: { title: 'T1' }, after: { title: 'T3' } },
      { before: { title: 'T3' }, after: { title: 'T4' } },
      { before: { status: 'NEW' }, after: { status: 'CONTACTED' } },
    ]);
  });

  it('without upsertBy, two items with one new external id: the second is 409; a bad owner is that item\'s 400', async () => {
    const o = await seedOrg(t.ctx);
    const res = await batch({ items: [{ name: 'A', externalId: 'dup' }, { name: 'B', externalId: 'dup' }, { name: 'C', ownerId: 'aaaaaaaaaaaaaaaaaaaaaaaa' }, { name: 'D' }] }, o);
    expect(res.body.data.results.map((r: { status: number }) => r.status)).toEqual([201, 409, 400, 201]);
    expect(res.body.data.results[2].error.errors).toEqual([{ field: 'ownerId', code: 'not_found', message: expect.any(String) }]);
    expect((await events(o)).map((e) => e.type)).toEqual(['lead.created', 'lead.created']);
  });

  it('a bad phone number is that item\'s 400, the same error a single create gives, and the other items are created', async () => {
    const o = await seedOrg(t.ctx);
    const bad = { name: 'Bad Phone', phoneNumber: 'not a phone', ownerId: 'aaaaaaaaaaaaaaaaaaaaaaaa' };
    const single = await call(t.app, 'POST', '/leads', { auth: o.auth, body: bad });
    const res = await batch({ items: [{ name: 'Fine', phoneNumber: '+14155550100' }, bad, { name: 'Also Fine', email: 'also@example.com' }] }, o);
    expect(res.body.data.results.map((r: { status: number }) => r.status)).toEqual([201, 400, 201]);
    expect(res.body.data.results[1].error).toEqual({ code: single.body.code, message: single.body.message, errors: single.body.errors });
    expect(res.body.data.results[1].error.errors.map((e: { field: string }) => e.field)).toEqual(['phoneNumber']);
  });

  it('refuses the whole batch only when its envelope is wrong: no items, 101 items, unknown upsertBy or property', async () => {
    const item = { name: 'X' };
    for (const body of [{ items: [] }, { items: Array.from({ length: 101 }, () => item) }, { items: [item], upsertBy: 'phone' }, { items: [item], extra: true }, { items: 'x' }]) {
      expectError(await batch(body), 400, 'VALIDATION_FAILED');
    }
    const hundred = await batch({ items: Array.from({ length: 100 }, (_, i) => ({ name: `Lead ${i}`, notes: 'n'.repeat(10_000) })) });
    expect(hundred.status).toBe(200);
    expect(hundred.body.data.results.every((r: { status: number }) => r.status === 201)).toBe(true);
  });

  it('counts as one request for the rate limit', async () => {
    const o = await seedOrg(t.ctx, { rateLimitPerMinute: 10 });
    const res = await batch({ items: Array.from({ length: 50 }, (_, i) => ({ name: `L${i}` })) }, o);
    expect(res.status).toBe(200);
    expect(res.headers['x-ratelimit-remaining']).toBe('9');
    expect(res.headers.ratelimit).toBe('"default";r=9;t=60');
    const second = await patch({ items: [{ id: res.body.data.results[0].lead.id, status: 'CONTACTED' }] }, o);
    expect(second.headers['x-ratelimit-remaining']).toBe('8');
  });

  it('Idempotency-Key covers the whole batch: the replay returns the same results and writes nothing', async () => {
    const o = await seedOrg(t.ctx);
    const body = { items: [{ name: 'Once', externalId: 'once' }, { name: '' }] };
    const first = await batch(body, o, { 'idempotency-key': 'batch-1' });
    const again = await batch(body, o, { 'idempotency-key': 'batch-1' });
    expect(again.status).toBe(200);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect((await events(o)).length).toBe(1);
    expectError(await batch({ items: [{ name: 'Other' }] }, o, { 'idempotency-key': 'batch-1' }), 422, 'IDEMPOTENCY_KEY_REUSED');
  });

  it('an erasure removes a stored batch response naming the erased lead: the key no longer replays it', async () => {
    const o = await seedOrg(t.ctx);
    const body = { items: [{ name: 'Erase Me', email: 'erase.batch@example.com' }, { name: 'Someone Else' }] };
    const first = await batch(body, o, { 'idempotency-key': 'erase-batch' });
    expect(first.body.data.results.map((r: { status: number }) => r.status)).toEqual([201, 201]);
    const erasure = await call(t.app, 'POST', '/privacy/erasures', { auth: o.auth, body: { email: 'erase.batch@example.com' } });
    expect(erasure.body.data.erasure.matched.leads).toBe(1);
    const again = await batch(body, o, { 'idempotency-key': 'erase-batch' });
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(again.body.data.results[0].lead.id).not.toBe(first.body.data.results[0].lead.id);
  });

  it('keeps organizations apart: another organization\'s external id or e-mail is not a holder', async () => {
    const a = await seedOrg(t.ctx);
    const b = await seedOrg(t.ctx);
    const theirs = await create({ name: 'Theirs', email: 'shared@example.com', externalId: 'shared' }, a);
    for (const upsertBy of ['email', 'externalId']) {
      const res = await batch({ upsertBy, items: [{ name: `Mine ${upsertBy}`, email: 'shared@example.com', externalId: `shared-${upsertBy}` }] }, b);
      expect(res.body.data.results[0].status).toBe(201);
      expect(res.body.data.results[0].lead.id).not.toBe(theirs.id);
    }
    const res = await patch({ items: [{ id: theirs.id, name: 'Hijacked' }] }, b);
    expect(res.body.data.results[0]).toMatchObject({ status: 404, error: { code: 'NOT_FOUND' } });
    expect((await call(t.app, 'GET', `/leads/${theirs.id}`, { auth: a.auth })).body.data.lead.name).toBe('Theirs');
  });
});

describe('PATCH /leads/batch', () => {
  it('a bulk update renaming some leads and not others: the name search follows the new names only', async () => {
    const o = await seedOrg(t.ctx);
    const [a, b, c] = [await create({ name: 'Quillfeather One' }, o), await create({ name: 'Quillfeather Two' }, o), await create({ name: 'Quillfeather Three' }, o)];
    const res = await patch({ items: [{ id: a.id, name: 'Zanzibar One' }, { id: b.id, title: 'Kept name' }, { id: c.id, name: 'Zanzibar Three', status: 'CONTACTED' }] }, o);
    expect(res.body.data.results.map((r: { status: number }) => r.status)).toEqual([200, 200, 200]);
    const search = async (q: string) => (await call(t.app, 'GET', `/leads?q=${q}`, { auth: o.auth })).body.data.leads.map((l: { id: string }) => l.id).sort();
    expect(await search('Zanzibar')).toEqual([a.id, c.id].sort());
    expect(await search('Quillfeather')).toEqual([b.id]);
  });

  it('a bulk update changing the status or account of some leads only: the filters on them follow each lead', async () => {
    const o = await seedOrg(t.ctx);
    const account = (await call(t.app, 'POST', '/accounts', { auth: o.auth, body: { name: 'Filtered' } })).body.data.account.id;
    const [a, b, c, d] = [await create({ name: 'Status A' }, o), await create({ name: 'Status B', accountId: account }, o), await create({ name: 'Status C' }, o), await create({ name: 'Status D' }, o)];
    const items = [{ id: a.id, status: 'CONTACTED' }, { id: b.id, accountId: null, title: 'Left' }, { id: c.id, accountId: account, status: 'QUALIFIED' }, { id: d.id, title: 'Kept all' }];
    const res = await patch({ items }, o);
    expect(res.body.data.results.map((r: { status: number }) => r.status)).toEqual([200, 200, 200, 200]);
    const list = async (query: string) => (await call(t.app, 'GET', `/leads?${query}`, { auth: o.auth })).body.data.leads.map((l: { id: string }) => l.id).sort();
    expect(await list('status=NEW')).toEqual([b.id, d.id].sort());
    expect(await list('status=CONTACTED')).toEqual([a.id]);
    expect(await list('status=QUALIFIED')).toEqual([c.id]);
    expect(await list(`accountId=${account}`)).toEqual([c.id]);
    expect((await call(t.app, 'GET', `/leads/${d.id}`, { auth: o.auth })).body.data.lead).toMatchObject({ title: 'Kept all', status: 'NEW', accountId: null });
  });

  it('two batches at once with the same ifMatch on the same leads: each lead is updated by exactly one of them', async () => {
    const o = await seedOrg(t.ctx);
    const leads = [];
    for (let i = 0; i < 10; i++) leads.push(await create({ name: `Race ${i}` }, o));
    // Without the batch's row lock, PostgreSQL lets both read the version ifMatch names before either writes.
    for (let round = 0; round < 4; round++) {
      const current = await Promise.all(leads.map(async (l) => (await call(t.app, 'GET', `/leads/${l.id}`, { auth: o.auth })).body.data.lead));
      const items = (title: string) => current.map((l) => ({ id: l.id, title, ifMatch: t.ctx.entityTagger.tagOf(l) }));
      const [a, b] = await Promise.all([patch({ items: items(`A${round}`) }, o), patch({ items: items(`B${round}`) }, o)]);
      current.forEach((_, i) => expect([a.body.data.results[i].status, b.body.data.results[i].status].sort()).toEqual([200, 412]));
    }
  });

  it('updates each item alone: 200, 404, 400, 409 and 412 with the current lead; one event per change', async () => {
    const o = await seedOrg(t.ctx);
    const a = await create({ name: 'A' }, o);
    const b = await create({ name: 'B', externalId: 'b' }, o);
    const c = await create({ name: 'C' }, o);
    const res = await patch(
      {
        items: [
          { id: a.id, status: 'QUALIFIED', ifMatch: t.ctx.entityTagger.tagOf(a) },
          { id: '0123456789abcdef01234567', name: 'Nobody' },
          { id: c.id, status: 'WRONG' },
          { id: c.id, externalId: 'b' },
          { id: b.id, name: 'B2', ifMatch: t.ctx.entityTagger.tagOf(a) },
          { name: 'no id' },
        ],
      },
      o,
    );
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const results = res.body.data.results;
    expect(results.map((r: { status: number }) => r.status)).toEqual([200, 404, 400, 409, 412, 400]);
    expect(results[0].lead).toMatchObject({ id: a.id, status: 'QUALIFIED' });
    expect(results[4].lead).toEqual(b);
    expect(results[5].error.errors[0]).toMatchObject({ field: 'id', code: 'required' });
    const updates = (await events(o)).filter((e) => e.type === 'lead.updated');
    expect(updates.map((e) => e.data.id)).toEqual([a.id]);
  });
});

/**
 * What a batch costs PostgreSQL is mostly its round trips (docs/performance.md, "Batch writes"), counted here on
 * the wire: none of them per item.
 */
describe.runIf(dialect === 'postgres')('round trips of POST /leads/batch (PostgreSQL)', () => {
  it('100 upsert hits by e-mail: ten (begin with the key locks; the probe; the holders; their row locks; the leads; savepoint; update; events; release; commit)', async () => {
    const o = await seedOrg(t.ctx, { rateLimitPerMinute: 1_000_000 });
    const emails = Array.from({ length: 100 }, (_, i) => `hit${i}@round-trips.example`);
    const upsert = (name: string) => batch({ upsertBy: 'email', items: emails.map((email, i) => ({ name: `${name} ${i}`, email })) }, o);
    expect((await upsert('Created')).body.data.results.map((r: { status: number }) => r.status)).toEqual(Array(100).fill(201));
    // A first batch of hits fills the caches (key, lead fields) that later ones read instead of the database.
    expect((await upsert('Warm-up')).status).toBe(200);
    const { result, sent } = await roundTripsDuring(() => upsert('Renamed'));
    expect(result.body.data.results.map((r: { status: number }) => r.status)).toEqual(Array(100).fill(200));
    expect(sent, JSON.stringify(sent)).toHaveLength(10);
    expect(sent[0]).toMatch(/^begin; select pg_advisory_xact_lock\(k\) from unnest\('\{-?\d+(,-?\d+)*\}'::bigint\[\]\)/);
    expect(sent.slice(1)).toEqual(['(extended)', '(extended)', '(extended)', '(extended)', 'savepoint batch_item', '(extended)', '(extended)', 'release batch_item', 'commit']);
  });
});
