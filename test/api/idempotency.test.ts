import { hash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, addKey, type Seeded } from '../helpers/seed.js';
import { call, expectError } from '../helpers/http.js';
import { claimKey, responseAad } from '../../src/modules/idempotency/idempotency.store.js';
import { requestFingerprint } from '../../src/modules/idempotency/idempotency.service.js';
import { canonicalJson } from '../../src/lib/canonical-json.js';
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
      requestHash: requestFingerprint(t.ctx.requestHasher, 'in-flight', { organizationId: a.orgId, method: 'POST', path: '/api/public/v1/leads', body: { name: 'Busy' } }).stored,
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

describe('the stored request hash', () => {
  const DAY_MS = 86_400_000;
  const storedHash = async (key: string) =>
    (await t.ctx.database.db.selectFrom('idempotency_keys').select('request_hash').where('organization_id', '=', a.orgId).where('key', '=', key).executeTakeFirstOrThrow()).request_hash;
  /** What releases before keyed hashes stored: a plain SHA-256 of the request, which a guess of the body confirms. */
  const unkeyed = (body: unknown) => hash('sha256', `POST /api/public/v1/leads\n${canonicalJson(body)}`, 'hex');
  /** A completed POST /leads entry as an older release stored it: the unkeyed request hash, `response` encrypted. */
  const storeAsOlderRelease = async (key: string, request: unknown, response: { data: { lead: { id: string } } }) => {
    const now = new Date();
    await t.ctx.database.db
      .insertInto('idempotency_keys')
      .values({
        organization_id: a.orgId,
        key,
        request_hash: unkeyed(request),
        state: 'done',
        response_status: 201,
        response_body: t.ctx.cipher.encrypt(JSON.stringify(response), responseAad(a.orgId, key)),
        locked_until: now.toISOString(),
        created_at: now.toISOString(),
        expires_at: new Date(now.getTime() + DAY_MS).toISOString(),
        resource_id: response.data.lead.id,
      })
      .execute();
  };

  it('is keyed: not the plain SHA-256 of the request, nor equal for the same body under two keys', async () => {
    const body = { name: 'Keyed Hash', email: 'keyed.hash@example.com' };
    await post('keyed-1', body);
    await post('keyed-2', body);
    const stored = await storedHash('keyed-1');
    expect(stored).toMatch(/^k1:[0-9a-f]{64}$/);
    expect(stored).not.toContain(unkeyed(body));
    expect(await storedHash('keyed-2')).not.toBe(stored);
    const replay = await post('keyed-1', { email: body.email, name: body.name });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expectError(await post('keyed-1', { ...body, email: 'keyed.other@example.com' }), 422, 'IDEMPOTENCY_KEY_REUSED');
    expect(await count('Keyed Hash')).toBe(2);
  });

  it('still honours an entry an older release stored with the unkeyed hash, for its 24 hours', async () => {
    const body = { name: 'Legacy Hash', email: 'legacy.hash@example.com' };
    const created = await post(undefined, body);
    await storeAsOlderRelease('legacy-1', body, created.body);
    const replay = await post('legacy-1', { email: body.email, name: body.name });
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body).toEqual(created.body);
    expectError(await post('legacy-1', { ...body, name: 'Legacy Hash Changed' }), 422, 'IDEMPOTENCY_KEY_REUSED');
    expect(await count('Legacy Hash')).toBe(1);
  });

  it('replays a response an older release stored without a field the schema now requires, as it was stored', async () => {
    const body = { name: 'Older Shape', email: 'older.shape@example.com' };
    const created = await post(undefined, body);
    const { externalId: _externalId, deletedAt: _deletedAt, ...olderLead } = created.body.data.lead;
    const olderBody = { data: { lead: olderLead } };
    await storeAsOlderRelease('older-shape', body, olderBody);
    const replay = await post('older-shape', body);
    expect(replay.status, JSON.stringify(replay.body)).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.headers['content-type']).toMatch(/^application\/json/);
    expect(replay.body).toEqual(olderBody);
    expect(await count('Older Shape')).toBe(1);
  });
});
