import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { addKey, seedOrg, type Seeded } from '../helpers/seed.js';
import { call, expectError } from '../helpers/http.js';
import { listEvents } from '../../src/modules/events/outbox.store.js';
import { SCOPES, type Scope } from '../../src/modules/orgs/principal.js';

let t: TestApp;
let a: Seeded;
let b: Seeded;
let account: string;
let deal: string;

beforeAll(async () => {
  t = await buildTestApp();
  a = await seedOrg(t.ctx);
  b = await seedOrg(t.ctx);
  account = (await call(t.app, 'POST', '/accounts', { auth: a.auth, body: { name: 'Scoped account' } })).body.data.account.id;
  deal = (await call(t.app, 'POST', '/deals', { auth: a.auth, body: { name: 'Scoped deal' } })).body.data.deal.id;
});
afterAll(() => t.close());

type Route = { name: string; method: 'GET' | 'POST' | 'PATCH'; path: () => string; scope: Scope; body?: Record<string, unknown>; ok: number };
const ROUTES: Route[] = [
  { name: 'GET /accounts', method: 'GET', path: () => '/accounts', scope: 'accounts:read', ok: 200 },
  { name: 'POST /accounts', method: 'POST', path: () => '/accounts', scope: 'accounts:write', body: { name: 'Scope test' }, ok: 201 },
  { name: 'GET /accounts/{id}', method: 'GET', path: () => `/accounts/${account}`, scope: 'accounts:read', ok: 200 },
  { name: 'PATCH /accounts/{id}', method: 'PATCH', path: () => `/accounts/${account}`, scope: 'accounts:write', body: { industry: 'Scopes' }, ok: 200 },
  { name: 'GET /deal-stages', method: 'GET', path: () => '/deal-stages', scope: 'deals:read', ok: 200 },
  { name: 'GET /deals', method: 'GET', path: () => '/deals', scope: 'deals:read', ok: 200 },
  { name: 'POST /deals', method: 'POST', path: () => '/deals', scope: 'deals:write', body: { name: 'Scope test' }, ok: 201 },
  { name: 'GET /deals/{id}', method: 'GET', path: () => `/deals/${deal}`, scope: 'deals:read', ok: 200 },
  { name: 'PATCH /deals/{id}', method: 'PATCH', path: () => `/deals/${deal}`, scope: 'deals:write', body: { stage: 'proposal' }, ok: 200 },
];

describe('scopes', () => {
  it.each(ROUTES.map((r) => [r.name, r] as const))('%s needs its scope', async (_, route) => {
    const without = await addKey(t.ctx, a.orgId, SCOPES.filter((s) => s !== route.scope));
    const denied = await call(t.app, route.method, route.path(), { auth: without.auth, body: route.body });
    expectError(denied, 403, 'INSUFFICIENT_SCOPE');
    expect(denied.body.message).toContain(route.scope);
    const only = await addKey(t.ctx, a.orgId, [route.scope]);
    const allowed = await call(t.app, route.method, route.path(), { auth: only.auth, body: route.body });
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(route.ok);
  });

  it('answers 401 without a key on every route', async () => {
    for (const route of ROUTES) expectError(await call(t.app, route.method, route.path(), { body: route.body }), 401, 'UNAUTHORIZED');
  });
});

describe('organizations are isolated', () => {
  it("answers 404 for another organization's account and deal on GET and PATCH, without changing them", async () => {
    for (const [path, body] of [[`/accounts/${account}`, { name: 'Taken' }], [`/deals/${deal}`, { name: 'Taken' }]] as const) {
      expectError(await call(t.app, 'GET', path, { auth: b.auth }), 404, 'NOT_FOUND');
      const res = await call(t.app, 'PATCH', path, { auth: b.auth, body });
      expectError(res, 404, 'NOT_FOUND');
      expect(res.body.message).not.toContain('Scoped');
    }
    expect((await call(t.app, 'GET', `/accounts/${account}`, { auth: a.auth })).body.data.account.name).toBe('Scoped account');
    expect((await call(t.app, 'GET', `/deals/${deal}`, { auth: a.auth })).body.data.deal.name).toBe('Scoped deal');
  });

  it("never lists another organization's accounts or deals", async () => {
    expect((await call(t.app, 'GET', '/accounts?q=Scoped', { auth: b.auth })).body.data.accounts).toEqual([]);
    expect((await call(t.app, 'GET', '/deals?q=Scoped', { auth: b.auth })).body.data.deals).toEqual([]);
    expect((await call(t.app, 'GET', `/deals?accountId=${account}`, { auth: b.auth })).body.data.pagination.total).toBe(0);
  });

  it("refuses references to another organization's account, lead or user on deals and leads", async () => {
    const lead = (await call(t.app, 'POST', '/leads', { auth: a.auth, body: { name: 'Their lead' } })).body.data.lead.id;
    const onDeal = expectError(await call(t.app, 'POST', '/deals', { auth: b.auth, body: { name: 'Poach', accountId: account, leadId: lead, ownerId: a.userId } }), 400, 'VALIDATION_FAILED');
    expect(onDeal.map((e) => `${e.field}:${e.code}`).sort()).toEqual(['accountId:not_found', 'leadId:not_found', 'ownerId:not_found']);
    const onLead = expectError(await call(t.app, 'POST', '/leads', { auth: b.auth, body: { name: 'Poach', accountId: account } }), 400, 'VALIDATION_FAILED');
    expect(onLead[0]).toMatchObject({ field: 'accountId', code: 'not_found' });
    const onAccount = expectError(await call(t.app, 'POST', '/accounts', { auth: b.auth, body: { name: 'Poach', ownerId: a.userId } }), 400, 'VALIDATION_FAILED');
    expect(onAccount[0]).toMatchObject({ field: 'ownerId', code: 'not_found' });
  });
});

describe('POST /deals idempotency', () => {
  it('replays the stored response: one deal, one event; a different body is 422; keys are per organization', async () => {
    const headers = { 'idempotency-key': 'deal-create-1' };
    const body = { name: 'Idempotent deal', amount: '10.50', currency: 'EUR' };
    const first = await call(t.app, 'POST', '/deals', { auth: a.auth, body, headers });
    const replay = await call(t.app, 'POST', '/deals', { auth: a.auth, body, headers });
    expect(first.status).toBe(201);
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(first.body);
    expect((await call(t.app, 'GET', '/deals?q=Idempotent', { auth: a.auth })).body.data.deals).toHaveLength(1);
    expect(await listEvents(t.ctx.database.db, a.orgId, { objectId: first.body.data.deal.id })).toHaveLength(1);
    expectError(await call(t.app, 'POST', '/deals', { auth: a.auth, body: { ...body, amount: '11' }, headers }), 422, 'IDEMPOTENCY_KEY_REUSED');
    const otherOrg = await call(t.app, 'POST', '/deals', { auth: b.auth, body, headers });
    expect(otherOrg.status).toBe(201);
    expect(otherOrg.headers['idempotent-replayed']).toBeUndefined();
    expect(otherOrg.body.data.deal.id).not.toBe(first.body.data.deal.id);
  });

  it('does not store a failed create: the same key works once the body is fixed', async () => {
    const headers = { 'idempotency-key': 'deal-create-2' };
    expectError(await call(t.app, 'POST', '/deals', { auth: a.auth, body: { name: 'Retry', stage: 'nope' }, headers }), 400, 'VALIDATION_FAILED');
    expect((await call(t.app, 'POST', '/deals', { auth: a.auth, body: { name: 'Retry', stage: 'won' }, headers })).status).toBe(201);
  });

  it('creates exactly one deal for simultaneous identical requests', async () => {
    const headers = { 'idempotency-key': 'deal-create-3' };
    const body = { name: 'Raced deal' };
    const results = await Promise.all(Array.from({ length: 5 }, () => call(t.app, 'POST', '/deals', { auth: a.auth, body, headers })));
    for (const r of results) expect([201, 409]).toContain(r.status);
    expect((await call(t.app, 'GET', '/deals?q=Raced', { auth: a.auth })).body.data.deals).toHaveLength(1);
  });
});

describe('OpenAPI', () => {
  it('documents the account and deal routes under their tags, with the amount and date rules', async () => {
    const doc = (await call(t.app, 'GET', '/api/public/v1/openapi.json')).body;
    for (const path of ['/accounts', '/accounts/{id}', '/deals', '/deals/{id}', '/deal-stages']) expect(doc.paths).toHaveProperty([`/api/public/v1${path}`]);
    expect(doc.tags).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'Accounts', description: expect.any(String) }), expect.objectContaining({ name: 'Deals', description: expect.any(String) })]));
    expect(doc.paths['/api/public/v1/deals'].post.tags).toEqual(['Deals']);
    expect(doc.paths['/api/public/v1/accounts'].post.responses).toHaveProperty(['422']);
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(['Account', 'Deal', 'DealStage']));
    const deal = JSON.stringify(doc.components.schemas.Deal);
    expect(deal).toContain('keeps the scale it was sent with');
    expect(deal).toContain('YYYY-MM-DDT00:00:00.000Z');
  });
});
