import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { addUser, seedOrg, type Seeded } from '../helpers/seed.js';
import { call, expectError } from '../helpers/http.js';
import { listEvents } from '../../src/modules/events/outbox.store.js';

let t: TestApp;
let a: Seeded;
let b: Seeded;
const refs = { a: { account: '', lead: '' }, b: { account: '', lead: '' } };

beforeAll(async () => {
  t = await buildTestApp();
  a = await seedOrg(t.ctx);
  b = await seedOrg(t.ctx);
  for (const [org, s] of [['a', a], ['b', b]] as const) {
    refs[org].account = (await call(t.app, 'POST', '/accounts', { auth: s.auth, body: { name: `Account ${org}` } })).body.data.account.id;
    refs[org].lead = (await call(t.app, 'POST', '/leads', { auth: s.auth, body: { name: `Lead ${org}` } })).body.data.lead.id;
  }
});
afterAll(() => t.close());

const createDeal = (s: Seeded, body: Record<string, unknown>) => call(t.app, 'POST', '/deals', { auth: s.auth, body });
const patchDeal = (s: Seeded, id: string, body: Record<string, unknown>) => call(t.app, 'PATCH', `/deals/${id}`, { auth: s.auth, body });

describe('POST /deals', () => {
  it('creates a deal with every field and returns the full record', async () => {
    const res = await createDeal(a, {
      name: ' Big Deal ',
      stage: 'proposal',
      amount: '48000.00',
      currency: 'eur',
      accountId: refs.a.account,
      leadId: refs.a.lead,
      ownerId: a.userId,
      expectedCloseDate: '2026-03-31',
    });
    expect(res.status).toBe(201);
    const deal = res.body.data.deal;
    expect(deal).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{24}$/),
      name: 'Big Deal',
      stage: 'proposal',
      amount: '48000.00',
      currency: 'EUR',
      accountId: refs.a.account,
      leadId: refs.a.lead,
      ownerId: a.userId,
      expectedCloseDate: '2026-03-31T00:00:00.000Z',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updatedAt: deal.createdAt,
      deletedAt: null,
      externalId: null,
    });
    expect((await call(t.app, 'GET', `/deals/${deal.id}`, { auth: a.auth })).body.data.deal).toEqual(deal);
  });

  it("defaults the stage to the organization's first stage and optional fields to null", async () => {
    const deal = (await createDeal(a, { name: 'Minimal' })).body.data.deal;
    expect(deal).toMatchObject({ stage: 'qualification', amount: null, currency: null, accountId: null, leadId: null, ownerId: null, expectedCloseDate: null });
  });

  it('refuses an unknown stage, naming the allowed keys', async () => {
    const res = await createDeal(a, { name: 'X', stage: 'closed_won' });
    const errors = expectError(res, 400, 'VALIDATION_FAILED');
    expect(errors).toEqual([{ field: 'stage', code: 'invalid_value', message: expect.stringContaining('qualification, proposal, negotiation, won, lost') }]);
    expect(res.body.message).toContain('qualification, proposal, negotiation, won, lost');
  });

  it('lists schema errors together, including unknown fields and wrong types', async () => {
    const errors = expectError(await createDeal(a, { name: '', amount: true, currency: 'EURO', accountId: 'nope', expectedCloseDate: 20260301, stgae: 'won' }), 400, 'VALIDATION_FAILED');
    expect(Object.fromEntries(errors.map((e) => [e.field, e.code]))).toEqual({
      name: 'too_short',
      amount: 'invalid_type',
      currency: 'invalid_format',
      accountId: 'invalid_format',
      expectedCloseDate: 'invalid_type',
      stgae: 'unknown_field',
    });
  });

  it("lists every bad reference and value at once: other organization's account, lead and owner", async () => {
    const errors = expectError(
      await createDeal(a, { name: 'Refs', accountId: refs.b.account, leadId: refs.b.lead, ownerId: b.userId, stage: 'nope', amount: '-1', currency: 'XYZ', expectedCloseDate: '2025-02-29' }),
      400,
      'VALIDATION_FAILED',
    );
    expect(Object.fromEntries(errors.map((e) => [e.field, e.code]))).toEqual({
      accountId: 'not_found',
      leadId: 'not_found',
      ownerId: 'not_found',
      stage: 'invalid_value',
      amount: 'out_of_range',
      currency: 'invalid_value',
      expectedCloseDate: 'invalid_date',
    });
    expect((await call(t.app, 'GET', '/deals?q=Refs', { auth: a.auth })).body.data.deals).toEqual([]);
  });

  it('refuses unknown ids of the right shape as references', async () => {
    const errors = expectError(await createDeal(a, { name: 'Ghost', accountId: '0000000000000000deadbeef', leadId: '0000000000000000deadbeef' }), 400, 'VALIDATION_FAILED');
    expect(errors.map((e) => e.field).sort()).toEqual(['accountId', 'leadId']);
  });
});

describe('amount and currency', () => {
  const amountOf = async (amount: unknown, currency = 'USD') => {
    const res = await createDeal(a, { name: 'Money', amount, currency });
    return res.status === 201 ? res.body.data.deal.amount : `${res.status}:${res.body.errors?.[0]?.code}`;
  };

  it('stores and returns exact decimal strings, keeping the sent scale, on both databases', async () => {
    expect(await amountOf('0.1')).toBe('0.1');
    expect(await amountOf('1234.50')).toBe('1234.50');
    expect(await amountOf('999999999999999.9999')).toBe('999999999999999.9999');
    expect(await amountOf('0')).toBe('0');
    expect(await amountOf('00012.3400')).toBe('12.3400');
    const deal = (await createDeal(a, { name: 'Exact', amount: '123456789012345.6789', currency: 'EUR' })).body.data.deal;
    expect((await call(t.app, 'GET', `/deals/${deal.id}`, { auth: a.auth })).body.data.deal.amount).toBe('123456789012345.6789');
  });

  it('accepts JSON numbers without float drift, and refuses ones a double cannot carry', async () => {
    expect(await amountOf(0.1)).toBe('0.1');
    expect(await amountOf(1234.5)).toBe('1234.5');
    expect(await amountOf(100)).toBe('100');
    expect(await amountOf(0.1 + 0.2)).toBe('400:too_precise');
  });

  it('refuses negatives, too many digits and non-decimal text', async () => {
    expect(await amountOf('-0.01')).toBe('400:out_of_range');
    expect(await amountOf(-5)).toBe('400:out_of_range');
    expect(await amountOf('1000000000000000')).toBe('400:out_of_range');
    expect(await amountOf('1.00001')).toBe('400:too_precise');
    expect(await amountOf('1e3')).toBe('400:invalid_format');
    expect(await amountOf('12,50')).toBe('400:invalid_format');
  });

  it('requires a currency with an amount, but not an amount with a currency', async () => {
    const errors = expectError(await createDeal(a, { name: 'No currency', amount: '10' }), 400, 'VALIDATION_FAILED');
    expect(errors).toEqual([{ field: 'currency', code: 'required', message: expect.stringContaining('amount') }]);
    expect((await createDeal(a, { name: 'Currency only', currency: 'GBP' })).body.data.deal).toMatchObject({ amount: null, currency: 'GBP' });
    const deal = (await createDeal(a, { name: 'Paid', amount: '10', currency: 'GBP' })).body.data.deal;
    expect(expectError(await patchDeal(a, deal.id, { currency: null }), 400, 'VALIDATION_FAILED')[0]).toMatchObject({ field: 'currency', code: 'required' });
    const cleared = await patchDeal(a, deal.id, { amount: null, currency: null });
    expect(cleared.body.data.deal).toMatchObject({ amount: null, currency: null });
  });
});

describe('PATCH /deals/{id} and events', () => {
  it('records deal.created with the initial values', async () => {
    const deal = (await createDeal(a, { name: 'Evented', amount: '5.50', currency: 'EUR' })).body.data.deal;
    const events = await listEvents(t.ctx.database.db, a.orgId, { objectId: deal.id });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: 'deal.created',
      data: { object: 'deal', id: deal.id, actor: { type: 'API_KEY', id: a.keyId, channel: 'API' }, changes: { before: {}, after: { name: 'Evented', stage: 'qualification', amount: '5.50', currency: 'EUR' } } },
    });
  });

  it('records deal.stage_changed (stage only) and a separate deal.updated for the other fields', async () => {
    const deal = (await createDeal(a, { name: 'Mover', amount: '100', currency: 'USD' })).body.data.deal;
    const res = await patchDeal(a, deal.id, { stage: 'won', amount: '120.00', name: 'Mover' });
    expect(res.status).toBe(200);
    expect(res.body.data.deal).toMatchObject({ stage: 'won', amount: '120.00', name: 'Mover' });
    expect(res.body.data.deal.updatedAt >= deal.updatedAt).toBe(true);
    const events = await listEvents(t.ctx.database.db, a.orgId, { objectId: deal.id });
    expect(events.map((e) => e.type)).toEqual(['deal.created', 'deal.stage_changed', 'deal.updated']);
    expect(events[1]!.data.changes).toEqual({ before: { stage: 'qualification' }, after: { stage: 'won' } });
    // People read labels; programs read the keys in `changes`.
    expect(events[1]!.data.description).toBe('Deal moved from Qualification to Won');
    expect(events[2]!.data.changes).toEqual({ before: { amount: '100' }, after: { amount: '120.00' } });
    expect((await call(t.app, 'GET', `/deals/${deal.id}`, { auth: a.auth })).body.data.deal).toEqual(res.body.data.deal);
  });

  it('allows any move between defined stages, with only deal.stage_changed when only the stage changes', async () => {
    const deal = (await createDeal(a, { name: 'Back and forth', stage: 'lost' })).body.data.deal;
    expect((await patchDeal(a, deal.id, { stage: 'qualification' })).body.data.deal.stage).toBe('qualification');
    const events = await listEvents(t.ctx.database.db, a.orgId, { objectId: deal.id });
    expect(events.map((e) => e.type)).toEqual(['deal.created', 'deal.stage_changed']);
    expect(events[1]!.data.changes).toEqual({ before: { stage: 'lost' }, after: { stage: 'qualification' } });
  });

  it('records only deal.updated when the stage does not change, and nothing when nothing changes', async () => {
    const deal = (await createDeal(a, { name: 'Quiet', stage: 'proposal', expectedCloseDate: '2026-05-01' })).body.data.deal;
    const same = await patchDeal(a, deal.id, { stage: 'proposal', expectedCloseDate: '2026-05-01T03:00:00Z', name: ' Quiet ' });
    expect(same.status).toBe(200);
    expect(same.body.data.deal.updatedAt).toBe(deal.updatedAt);
    await patchDeal(a, deal.id, { stage: 'proposal', ownerId: a.userId, expectedCloseDate: null });
    const events = await listEvents(t.ctx.database.db, a.orgId, { objectId: deal.id });
    expect(events.map((e) => e.type)).toEqual(['deal.created', 'deal.updated']);
    expect(events[1]!.data.changes).toEqual({ before: { ownerId: null, expectedCloseDate: '2026-05-01T00:00:00.000Z' }, after: { ownerId: a.userId, expectedCloseDate: null } });
  });

  it('refuses bad stages and references on patch, all listed, leaving the deal unchanged', async () => {
    const deal = (await createDeal(a, { name: 'Stable' })).body.data.deal;
    const errors = expectError(await patchDeal(a, deal.id, { stage: 'done', accountId: refs.b.account, leadId: refs.b.lead, ownerId: b.userId }), 400, 'VALIDATION_FAILED');
    expect(errors.map((e) => e.field).sort()).toEqual(['accountId', 'leadId', 'ownerId', 'stage']);
    expect((await call(t.app, 'GET', `/deals/${deal.id}`, { auth: a.auth })).body.data.deal).toEqual(deal);
    expect(await listEvents(t.ctx.database.db, a.orgId, { objectId: deal.id })).toHaveLength(1);
  });

  it("refuses an empty body and unknown fields; 404 for another organization's deal", async () => {
    const deal = (await createDeal(a, { name: 'Mine' })).body.data.deal;
    expectError(await patchDeal(a, deal.id, {}), 400, 'VALIDATION_FAILED');
    expect(expectError(await patchDeal(a, deal.id, { stge: 'won' }), 400, 'VALIDATION_FAILED')[0]).toMatchObject({ field: 'stge', code: 'unknown_field' });
    expectError(await patchDeal(b, deal.id, { stage: 'won' }), 404, 'NOT_FOUND');
    expectError(await call(t.app, 'GET', `/deals/${deal.id}`, { auth: b.auth }), 404, 'NOT_FOUND');
    expectError(await patchDeal(a, '0000000000000000deadbeef', { stage: 'won' }), 404, 'NOT_FOUND');
    expect((await call(t.app, 'GET', `/deals/${deal.id}`, { auth: a.auth })).body.data.deal.stage).toBe('qualification');
  });
});

describe('GET /deals filters and pagination', () => {
  let s: Seeded;
  let rep: string;
  let acme: string;
  let globex: string;
  beforeAll(async () => {
    s = await seedOrg(t.ctx);
    rep = await addUser(t.ctx, s.orgId);
    acme = (await call(t.app, 'POST', '/accounts', { auth: s.auth, body: { name: 'Acme' } })).body.data.account.id;
    globex = (await call(t.app, 'POST', '/accounts', { auth: s.auth, body: { name: 'Globex' } })).body.data.account.id;
    const deals = [
      { name: 'Acme renewal', stage: 'proposal', accountId: acme, ownerId: rep },
      { name: 'Acme expansion', stage: 'won', accountId: acme, ownerId: s.userId },
      { name: 'Globex pilot', stage: 'proposal', accountId: globex, ownerId: rep },
      { name: 'Globex 100%_sure', stage: 'lost', accountId: globex },
      { name: 'Walk-in', stage: 'qualification' },
    ];
    for (const d of deals) expect((await createDeal(s, d)).status).toBe(201);
  });
  const names = async (qs: string) => {
    const res = await call(t.app, 'GET', `/deals?${qs}`, { auth: s.auth });
    expect(res.status, qs).toBe(200);
    return res.body.data.deals.map((d: { name: string }) => d.name);
  };

  it('lists newest first', async () => {
    expect(await names('')).toEqual(['Walk-in', 'Globex 100%_sure', 'Globex pilot', 'Acme expansion', 'Acme renewal']);
  });

  it('filters by stage, account, owner and name substring, and combines them', async () => {
    expect(await names('stage=proposal')).toEqual(['Globex pilot', 'Acme renewal']);
    expect(await names(`accountId=${acme}`)).toEqual(['Acme expansion', 'Acme renewal']);
    expect(await names(`ownerId=${rep}`)).toEqual(['Globex pilot', 'Acme renewal']);
    expect(await names('q=GLOBEX')).toEqual(['Globex 100%_sure', 'Globex pilot']);
    expect(await names('q=ewa')).toEqual(['Acme renewal']);
    expect(await names('q=al')).toEqual(['Walk-in', 'Acme renewal']);
    expect(await names(`q=${encodeURIComponent('%_')}`)).toEqual(['Globex 100%_sure']);
    expect(await names(`stage=proposal&ownerId=${rep}&accountId=${globex}`)).toEqual(['Globex pilot']);
    expect(await names(`stage=won&q=pilot`)).toEqual([]);
    expect(await names(`accountId=0000000000000000deadbeef`)).toEqual([]);
  });

  it('refuses an unknown stage filter naming the allowed keys, and malformed ids', async () => {
    const res = await call(t.app, 'GET', '/deals?stage=closed', { auth: s.auth });
    expect(expectError(res, 400, 'VALIDATION_FAILED')[0]).toMatchObject({ field: 'stage', code: 'invalid_value' });
    expect(res.body.message).toContain('qualification, proposal, negotiation, won, lost');
    expect(expectError(await call(t.app, 'GET', '/deals?accountId=abc', { auth: s.auth }), 400, 'VALIDATION_FAILED')[0]!.field).toBe('accountId');
    expect(expectError(await call(t.app, 'GET', '/deals?ownerId=abc', { auth: s.auth }), 400, 'VALIDATION_FAILED')[0]!.field).toBe('ownerId');
    expectError(await call(t.app, 'GET', '/deals?owner=abc', { auth: s.auth }), 400, 'VALIDATION_FAILED');
  });

  it('paginates with page/limit and reports totals for the filter', async () => {
    const res = await call(t.app, 'GET', '/deals?page=2&limit=2', { auth: s.auth });
    expect(res.body.data.pagination).toEqual({ page: 2, limit: 2, total: 5, totalPages: 3, hasMore: true, nextCursor: expect.any(String) });
    expect(res.body.data.deals.map((d: { name: string }) => d.name)).toEqual(['Globex pilot', 'Acme expansion']);
    const filtered = await call(t.app, 'GET', '/deals?stage=proposal&limit=1&page=2', { auth: s.auth });
    expect(filtered.body.data.pagination).toEqual({ page: 2, limit: 1, total: 2, totalPages: 2, hasMore: false, nextCursor: null });
    for (const qs of ['limit=0', 'limit=101', 'page=0']) expectError(await call(t.app, 'GET', `/deals?${qs}`, { auth: s.auth }), 400, 'VALIDATION_FAILED');
  });

  it("never lists another organization's deals, even filtered by its account or owner", async () => {
    expect((await call(t.app, 'GET', '/deals?q=Acme', { auth: a.auth })).body.data.deals).toEqual([]);
    expect((await call(t.app, 'GET', `/deals?accountId=${acme}`, { auth: a.auth })).body.data.deals).toEqual([]);
    expect((await call(t.app, 'GET', `/deals?ownerId=${rep}`, { auth: a.auth })).body.data.deals).toEqual([]);
    expect((await call(t.app, 'GET', '/deals?stage=proposal&limit=100', { auth: b.auth })).body.data.pagination.total).toBe(0);
  });
});
