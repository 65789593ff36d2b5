import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, addKey, type Seeded } from '../helpers/seed.js';
import { call, expectError } from '../helpers/http.js';
import { claimKey } from '../../src/modules/idempotency/idempotency.store.js';
import { requestHash } from '../../src/modules/idempotency/idempotency.service.js';
import { listEvents } from '../../src/modules/events/outbox.store.js';

let t: TestApp;
let a: Seeded;

beforeAll(async () => {
  t = await buildTestApp();
  a = await seedOrg(t.ctx, { rateLimitPerMinute: 10_000 });
});
afterAll(() => t.close());

const post = (key: string | undefined, body: unknown, auth = a.auth) =>
  call(t.app, 'POST', '/leads', { auth, body, headers: key === undefined ? {} : { 'idempotency-key': key } });

const count = async (q: string) => (await call(t.app, 'GET', `/leads?q=${encodeURIComponent(q)}`, { auth: a.auth })).body.data.pagination.total;

describe('Idempotency-Key on POST /leads', () => {
  it('replays the stored response for the same key and body: one lead, one event', async () => {
    const body = { name: 'Idem One', email: 'idem1@example.com' };
    const first = await post('form-1', body);
    const again = await post('form-1', { email: 'idem1@example.com', name: 'Idem One' });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(again.body).toEqual(first.body);
    expect(await count('Idem One')).toBe(1);
    expect(await listEvents(t.ctx.database.db, a.orgId, { objectId: first.body.data.lead.id })).toHaveLength(1);
  });

  it('shares the key space across keys of one organization, not across organizations', async () => {
    const sibling = await addKey(t.ctx, a.orgId, ['leads:write']);
    const first = await post('shared-1', { name: 'Shared' });
    const replay = await post('shared-1', { name: 'Shared' }, sibling.auth);
    expect(replay.body.data.lead.id).toBe(first.body.data.lead.id);
    const b = await seedOrg(t.ctx);
    const other = await post('shared-1', { name: 'Shared' }, b.auth);
    expect(other.status).toBe(201);
    expect(other.body.data.lead.id).not.toBe(first.body.data.lead.id);
  });

  it('answers 422 when the key is reused with a different body or path', async () => {
    await post('form-2', { name: 'Idem Two' });
    expectError(await post('form-2', { name: 'Idem Two!' }), 422, 'IDEMPOTENCY_KEY_REUSED');
    expect(await count('Idem Two')).toBe(1);
  });

  it('answers 409 while the same key is still being processed', async () => {
    const now = new Date();
    await claimKey(t.ctx.database.db, {
      organizationId: a.orgId,
      key: 'in-flight',
      requestHash: requestHash({ method: 'POST', path: '/api/public/v1/leads', body: { name: 'Busy' } }),
      lockedUntil: new Date(now.getTime() + 60_000).toISOString(),
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + 86_400_000).toISOString(),
    });
    const res = expectError(await post('in-flight', { name: 'Busy' }), 409, 'IDEMPOTENCY_KEY_IN_USE');
    expect(res).toEqual([]);
    expect(await count('Busy')).toBe(0);
  });

  it('N simultaneous identical requests create exactly one lead', async () => {
    const body = { name: 'Racer', phoneNumber: '+14155550177' };
    const results = await Promise.all(Array.from({ length: 20 }, () => post('race-1', body)));
    const created = results.filter((r) => r.status === 201);
    const busy = results.filter((r) => r.status === 409);
    expect(created.length + busy.length).toBe(20);
    expect(new Set(created.map((r) => r.body.data.lead.id)).size).toBe(1);
    for (const r of busy) expect(r.body.code).toBe('IDEMPOTENCY_KEY_IN_USE');
    expect(await count('Racer')).toBe(1);
    const after = await post('race-1', body);
    expect(after.headers['idempotent-replayed']).toBe('true');
  });

  it('does not store requests that fail validation or authentication', async () => {
    expectError(await post('bad-1', { name: '' }), 400, 'VALIDATION_FAILED');
    const fixed = await post('bad-1', { name: 'Fixed' });
    expect(fixed.status).toBe(201);
    expectError(await post('auth-1', { name: 'X' }, { authorization: 'Bearer nope' }), 401, 'UNAUTHORIZED');
    expect((await post('auth-1', { name: 'Y' })).status).toBe(201);
  });

  it('does not store a request whose service check failed, so a corrected retry works', async () => {
    const b = await seedOrg(t.ctx);
    expectError(await post('ref-1', { name: 'Ref', ownerId: b.userId }), 400, 'VALIDATION_FAILED');
    expect((await post('ref-1', { name: 'Ref' })).status).toBe(201);
  });

  it('accepts a Structured-Field quoted key and refuses malformed keys', async () => {
    const first = await post('"sf-key"', { name: 'Quoted' });
    const bare = await post('sf-key', { name: 'Quoted' });
    expect(bare.headers['idempotent-replayed']).toBe('true');
    expect(bare.body.data.lead.id).toBe(first.body.data.lead.id);
    expect(expectError(await post('x'.repeat(256), { name: 'Long' }), 400, 'VALIDATION_FAILED')[0]!.field).toBe('Idempotency-Key');
    expectError(await post('tab\tkey', { name: 'Tab' }), 400, 'VALIDATION_FAILED');
  });

  it('stores the replayable response encrypted: no contact detail in clear', async () => {
    await post('secret-1', { name: 'Stored', email: 'stored-secret@example.com' });
    const rows = await t.ctx.database.db.selectFrom('idempotency_keys').selectAll().execute();
    expect(JSON.stringify(rows)).not.toContain('stored-secret@example.com');
  });
});
