import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { sql } from 'kysely';
import { buildTestApp, dialect, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call, expectError } from '../helpers/http.js';
import { listEvents } from '../../src/modules/events/outbox.store.js';

let t: TestApp;
let a: Seeded;
let b: Seeded;

beforeAll(async () => {
  t = await buildTestApp();
  a = await seedOrg(t.ctx);
  b = await seedOrg(t.ctx);
});
afterAll(() => t.close());

const createAccount = (auth: Seeded, body: Record<string, unknown>) => call(t.app, 'POST', '/accounts', { auth: auth.auth, body });

describe('POST /accounts', () => {
  it('creates an account with every field, normalizing e-mail, phone and domain', async () => {
    const res = await createAccount(a, {
      name: '  Analytical Engines ',
      domain: 'Analytical.Example',
      email: ' Hello@Analytical.EXAMPLE ',
      phoneNumber: '+44 20 7946 0958',
      industry: 'Computing',
      website: 'https://analytical.example/about',
      ownerId: a.userId,
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: true, code: 'SUCCESS' });
    const account = res.body.data.account;
    expect(account).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{24}$/),
      name: 'Analytical Engines',
      domain: 'analytical.example',
      email: 'hello@analytical.example',
      phoneNumber: '+442079460958',
      industry: 'Computing',
      website: 'https://analytical.example/about',
      ownerId: a.userId,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updatedAt: account.createdAt,
      deletedAt: null,
      externalId: null,
    });
  });

  it('defaults optional fields to null', async () => {
    const res = await createAccount(a, { name: 'Bare' });
    expect(res.status).toBe(201);
    expect(res.body.data.account).toMatchObject({ domain: null, email: null, phoneNumber: null, industry: null, website: null, ownerId: null });
  });

  it('lists every bad field at once', async () => {
    const res = await createAccount(a, {
      name: '',
      domain: 'not a domain',
      email: 'nope',
      phoneNumber: '4155550100',
      website: 'ftp://files.example',
      industry: 'x'.repeat(201),
      ownerId: 'xyz',
      extra: 1,
    });
    const byField = Object.fromEntries(expectError(res, 400, 'VALIDATION_FAILED').map((e) => [e.field, e.code]));
    expect(byField).toEqual({
      name: 'too_short',
      domain: 'invalid_format',
      email: 'invalid_format',
      phoneNumber: 'invalid_format',
      website: 'invalid_format',
      industry: 'too_long',
      ownerId: 'invalid_format',
      extra: 'unknown_field',
    });
  });

  it('requires a name and accepts only http(s) websites', async () => {
    expect(expectError(await createAccount(a, {}), 400, 'VALIDATION_FAILED')[0]).toMatchObject({ field: 'name', code: 'required' });
    expect(expectError(await createAccount(a, { name: 'W', website: 'javascript:alert(1)' }), 400, 'VALIDATION_FAILED')[0]!.field).toBe('website');
    expect(expectError(await createAccount(a, { name: 'W', website: 'example.com' }), 400, 'VALIDATION_FAILED')[0]!.field).toBe('website');
    expect((await createAccount(a, { name: 'W', website: 'http://example.com' })).status).toBe(201);
  });

  it("refuses an owner of another organization", async () => {
    expect(expectError(await createAccount(a, { name: 'X', ownerId: b.userId }), 400, 'VALIDATION_FAILED')[0]).toMatchObject({ field: 'ownerId', code: 'not_found' });
  });

  it('records account.created with contact fields masked, and keeps them encrypted at rest', async () => {
    const account = (await createAccount(a, { name: 'Secretive', email: 'secret.account@example.com', phoneNumber: '+14155550177' })).body.data.account;
    const events = await listEvents(t.ctx.database.db, a.orgId, { objectId: account.id });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: 'account.created',
      organization: a.orgId,
      data: {
        object: 'account',
        id: account.id,
        actor: { type: 'API_KEY', id: a.keyId, channel: 'API' },
        changes: { before: {}, after: { name: 'Secretive', email: '[encrypted]', phoneNumber: '[encrypted]' } },
      },
    });
    expect(JSON.stringify(events)).not.toContain('secret.account');
    const row = await t.ctx.database.db.selectFrom('accounts').selectAll().where('id', '=', account.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain('secret.account');
    expect(JSON.stringify(row)).not.toContain('4155550177');
    if (dialect === 'sqlite') {
      await sql`pragma wal_checkpoint(truncate)`.execute(t.ctx.database.db);
      const file = readFileSync(t.location);
      expect(file.includes('secret.account@example.com')).toBe(false);
      expect(file.includes('+14155550177')).toBe(false);
    }
  });

  it('binds the ciphertext to its row: a value copied to another account does not decrypt', async () => {
    const one = (await createAccount(a, { name: 'One', email: 'one@example.com' })).body.data.account;
    const two = (await createAccount(a, { name: 'Two' })).body.data.account;
    const db = t.ctx.database.db;
    const { email_enc } = await db.selectFrom('accounts').select('email_enc').where('id', '=', one.id).executeTakeFirstOrThrow();
    await db.updateTable('accounts').set({ email_enc }).where('id', '=', two.id).execute();
    expectError(await call(t.app, 'GET', `/accounts/${two.id}`, { auth: a.auth }), 500, 'INTERNAL_ERROR');
    await db.updateTable('accounts').set({ email_enc: null }).where('id', '=', two.id).execute();
  });

  it('replays an idempotent create without a second account or event', async () => {
    const headers = { 'idempotency-key': 'acct-create-1' };
    const body = { name: 'Once Only', email: 'once@example.com' };
    const first = await call(t.app, 'POST', '/accounts', { auth: a.auth, body, headers });
    const second = await call(t.app, 'POST', '/accounts', { auth: a.auth, body, headers });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toEqual(first.body);
    const found = await call(t.app, 'GET', '/accounts?q=once@example.com', { auth: a.auth });
    expect(found.body.data.accounts).toHaveLength(1);
    expect(await listEvents(t.ctx.database.db, a.orgId, { objectId: first.body.data.account.id })).toHaveLength(1);
    expectError(await call(t.app, 'POST', '/accounts', { auth: a.auth, body: { name: 'Different' }, headers }), 422, 'IDEMPOTENCY_KEY_REUSED');
  });
});

describe('GET /accounts/{id}', () => {
  it("returns the account; 404 for unknown ids and another organization's account", async () => {
    const account = (await createAccount(a, { name: 'Readable', email: 'readable@example.com' })).body.data.account;
    const got = await call(t.app, 'GET', `/accounts/${account.id}`, { auth: a.auth });
    expect(got.status).toBe(200);
    expect(got.body.data.account).toEqual(account);
    expectError(await call(t.app, 'GET', `/accounts/${account.id}`, { auth: b.auth }), 404, 'NOT_FOUND');
    expectError(await call(t.app, 'GET', '/accounts/0000000000000000deadbeef', { auth: a.auth }), 404, 'NOT_FOUND');
  });
});

describe('PATCH /accounts/{id}', () => {
  it('changes only the sent fields, clears with null, and records account.updated with just the changes', async () => {
    const account = (await createAccount(a, { name: 'Patchable', email: 'old.acct@example.com', industry: 'Retail', website: 'https://old.example' })).body.data.account;
    const res = await call(t.app, 'PATCH', `/accounts/${account.id}`, { auth: a.auth, body: { industry: null, email: 'New.Acct@Example.com', domain: 'NEW.example' } });
    expect(res.status).toBe(200);
    expect(res.body.data.account).toMatchObject({ name: 'Patchable', industry: null, email: 'new.acct@example.com', domain: 'new.example', website: 'https://old.example' });
    const events = await listEvents(t.ctx.database.db, a.orgId, { objectId: account.id });
    expect(events.map((e) => e.type)).toEqual(['account.created', 'account.updated']);
    expect(events[1]!.data.changes).toEqual({
      before: { industry: 'Retail', email: '[encrypted]', domain: null },
      after: { industry: null, email: '[encrypted]', domain: 'new.example' },
    });
    expect((await call(t.app, 'GET', '/accounts?q=new.acct@example.com', { auth: a.auth })).body.data.accounts).toHaveLength(1);
    expect((await call(t.app, 'GET', '/accounts?q=old.acct@example.com', { auth: a.auth })).body.data.accounts).toHaveLength(0);
    const got = await call(t.app, 'GET', `/accounts/${account.id}`, { auth: a.auth });
    expect(got.body.data.account).toEqual(res.body.data.account);
  });

  it('records no event and keeps updatedAt when nothing changes', async () => {
    const account = (await createAccount(a, { name: 'Steady', domain: 'steady.example' })).body.data.account;
    const res = await call(t.app, 'PATCH', `/accounts/${account.id}`, { auth: a.auth, body: { domain: 'STEADY.example', name: 'Steady' } });
    expect(res.status).toBe(200);
    expect(res.body.data.account.updatedAt).toBe(account.updatedAt);
    expect(await listEvents(t.ctx.database.db, a.orgId, { objectId: account.id })).toHaveLength(1);
  });

  it("refuses an empty body, unknown fields, bad owners, and another organization's account", async () => {
    const account = (await createAccount(a, { name: 'Guarded' })).body.data.account;
    expectError(await call(t.app, 'PATCH', `/accounts/${account.id}`, { auth: a.auth, body: {} }), 400, 'VALIDATION_FAILED');
    expect(expectError(await call(t.app, 'PATCH', `/accounts/${account.id}`, { auth: a.auth, body: { nmae: 'x' } }), 400, 'VALIDATION_FAILED')[0]).toMatchObject({ field: 'nmae', code: 'unknown_field' });
    expect(expectError(await call(t.app, 'PATCH', `/accounts/${account.id}`, { auth: a.auth, body: { ownerId: b.userId } }), 400, 'VALIDATION_FAILED')[0]).toMatchObject({ field: 'ownerId', code: 'not_found' });
    expectError(await call(t.app, 'PATCH', `/accounts/${account.id}`, { auth: b.auth, body: { name: 'Stolen' } }), 404, 'NOT_FOUND');
    expect((await call(t.app, 'GET', `/accounts/${account.id}`, { auth: a.auth })).body.data.account.name).toBe('Guarded');
  });
});

describe('GET /accounts search and pagination', () => {
  let s: Seeded;
  beforeAll(async () => {
    s = await seedOrg(t.ctx);
    const names = ['Acme Rockets', 'Acme Anvils', 'Globex', 'Initech', 'Umbrella 100%_sure', 'Zoë Ärger GmbH'];
    for (const [i, name] of names.entries()) await createAccount(s, { name, email: `acct${i}@example.com`, phoneNumber: `+1415555020${i}` });
  });
  const search = async (q: string) => {
    const res = await call(t.app, 'GET', `/accounts?q=${encodeURIComponent(q)}`, { auth: s.auth });
    expect(res.status, q).toBe(200);
    return res.body.data.accounts.map((x: { name: string }) => x.name);
  };

  it('finds by case-insensitive name substring, newest first, through the trigram index and for 1–2 characters', async () => {
    expect(await search('ACME')).toEqual(['Acme Anvils', 'Acme Rockets']);
    expect(await search('obe')).toEqual(['Globex']);
    expect(await search('zoë')).toEqual(['Zoë Ärger GmbH']);
    expect(await search('In')).toEqual(['Initech']);
    expect(await search('x')).toEqual(['Globex']);
    expect(await search('100%_')).toEqual(['Umbrella 100%_sure']);
    expect(await search('%')).toEqual(['Umbrella 100%_sure']);
  });

  it('looks up an exact e-mail (any case) or phone (any international notation, %2B for +)', async () => {
    expect(await search('ACCT2@example.com')).toEqual(['Globex']);
    expect(await search('+1 415 555 0203')).toEqual(['Initech']);
    expect((await call(t.app, 'GET', '/accounts?q=%2B14155550200', { auth: s.auth })).body.data.accounts.map((x: { name: string }) => x.name)).toEqual(['Acme Rockets']);
    expect(await search('acct2@example')).toEqual([]);
  });

  it('paginates with page/limit and reports totals', async () => {
    const res = await call(t.app, 'GET', '/accounts?page=2&limit=4', { auth: s.auth });
    expect(res.body.data.pagination).toEqual({ page: 2, limit: 4, total: 6, totalPages: 2, hasMore: false, nextCursor: null });
    expect(res.body.data.accounts.map((x: { name: string }) => x.name)).toEqual(['Acme Anvils', 'Acme Rockets']);
    const first = await call(t.app, 'GET', '/accounts?limit=4', { auth: s.auth });
    expect(first.body.data.pagination).toMatchObject({ page: 1, total: 6, hasMore: true });
    expect(first.body.data.accounts[0].name).toBe('Zoë Ärger GmbH');
    for (const qs of ['limit=0', 'limit=101', 'page=0', 'stage=won']) expectError(await call(t.app, 'GET', `/accounts?${qs}`, { auth: s.auth }), 400, 'VALIDATION_FAILED');
  });

  it("never lists another organization's accounts", async () => {
    expect((await call(t.app, 'GET', '/accounts?q=Acme', { auth: a.auth })).body.data.accounts).toEqual([]);
    expect((await call(t.app, 'GET', '/accounts?q=acct0@example.com', { auth: a.auth })).body.data.accounts).toEqual([]);
    const all = await call(t.app, 'GET', '/accounts?limit=100', { auth: b.auth });
    expect(all.body.data.pagination.total).toBe(0);
  });
});
