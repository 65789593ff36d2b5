import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { addUser, seedOrg, type Seeded } from '../helpers/seed.js';
import { call, expectError } from '../helpers/http.js';
import { listEvents } from '../../src/modules/events/outbox.store.js';
import { setAssignmentRules } from '../../src/modules/orgs/rules.service.js';

let t: TestApp;
let a: Seeded;
let b: Seeded;

beforeAll(async () => {
  t = await buildTestApp();
  a = await seedOrg(t.ctx);
  b = await seedOrg(t.ctx);
});
afterAll(() => t.close());

const createLead = (auth: Seeded, body: Record<string, unknown>) => call(t.app, 'POST', '/leads', { auth: auth.auth, body });

describe('POST /leads', () => {
  it('creates a lead with every contract field, normalizing e-mail and phone', async () => {
    const res = await createLead(a, {
      name: '  Ada Lovelace ',
      email: '  Ada.Lovelace@Example.COM ',
      phoneNumber: '+44 20 7946 0958',
      source: 'WEBSITE',
      sourceCampaign: 'spring',
      status: 'CONTACTED',
      company: 'Analytical Engines',
      title: 'Countess',
      notes: 'Met at the expo',
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: true, code: 'SUCCESS' });
    const lead = res.body.data.lead;
    expect(lead).toMatchObject({
      name: 'Ada Lovelace',
      email: 'ada.lovelace@example.com',
      phoneNumber: '+442079460958',
      source: 'WEBSITE',
      sourceCampaign: 'spring',
      status: 'CONTACTED',
      company: 'Analytical Engines',
      title: 'Countess',
      notes: 'Met at the expo',
      ownerId: null,
      accountId: null,
      duplicateOf: null,
    });
    expect(lead.id).toMatch(/^[0-9a-f]{24}$/);
    expect(lead.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(lead.updatedAt).toBe(lead.createdAt);
  });

  it('defaults status to NEW and optional fields to null', async () => {
    const res = await createLead(a, { name: 'Minimal' });
    expect(res.status).toBe(201);
    expect(res.body.data.lead).toMatchObject({ status: 'NEW', email: null, phoneNumber: null, source: null });
  });

  it('lists every bad field at once', async () => {
    const res = await createLead(a, { name: '', email: 'not-an-email', phoneNumber: '4155550100', source: 'TV', status: 'HOT', ownerId: 'xyz', extra: true });
    const errors = expectError(res, 400, 'VALIDATION_FAILED');
    const byField = Object.fromEntries(errors.map((e) => [e.field, e.code]));
    expect(byField).toEqual({
      name: 'too_short',
      email: 'invalid_format',
      phoneNumber: 'invalid_format',
      source: 'invalid_value',
      status: 'invalid_value',
      ownerId: 'invalid_format',
      extra: 'unknown_field',
    });
    expect(errors.find((e) => e.field === 'phoneNumber')!.message).toMatch(/country code/);
    // Not "must be at least 1 characters".
    expect(errors.find((e) => e.field === 'name')!.message).toBe('must not be empty');
    expect(JSON.stringify(res.body)).not.toContain('not-an-email');
  });

  it('requires a name and refuses wrong types without coercion', async () => {
    const errors = expectError(await createLead(a, { email: 'x@example.com', notes: 5 }), 400, 'VALIDATION_FAILED');
    expect(errors).toEqual(expect.arrayContaining([
      expect.objectContaining({ field: 'name', code: 'required' }),
      expect.objectContaining({ field: 'notes', code: 'invalid_type' }),
    ]));
  });

  it('refuses a whitespace-only name and overlong fields', async () => {
    const errors = expectError(await createLead(a, { name: '   ', company: 'x'.repeat(201) }), 400, 'VALIDATION_FAILED');
    expect(errors.map((e) => e.field).sort()).toEqual(['company', 'name']);
    expect(errors.find((e) => e.field === 'name')).toEqual({ field: 'name', code: 'invalid_format', message: 'must not be blank' });
  });

  it('refuses an owner that is not a user of the organization', async () => {
    const errors = expectError(await createLead(a, { name: 'X', ownerId: b.userId }), 400, 'VALIDATION_FAILED');
    expect(errors[0]).toMatchObject({ field: 'ownerId', code: 'not_found' });
  });

  it('marks a later lead with the same e-mail or phone as a duplicate of the oldest', async () => {
    const first = (await createLead(a, { name: 'Dup One', email: 'dup@example.com' })).body.data.lead;
    const other = (await createLead(a, { name: 'Dup Other', phoneNumber: '+14155550199' })).body.data.lead;
    const second = (await createLead(a, { name: 'Dup Two', email: 'DUP@example.com' })).body.data.lead;
    const third = (await createLead(a, { name: 'Dup Three', phoneNumber: '+1 (415) 555-0199' })).body.data.lead;
    // Matches both by phone (other) and by e-mail (first, older): the oldest wins.
    const both = (await createLead(a, { name: 'Dup Both', email: 'dup@example.com', phoneNumber: '+14155550199' })).body.data.lead;
    expect(first.duplicateOf).toBeNull();
    expect(other.duplicateOf).toBeNull();
    expect(second.duplicateOf).toBe(first.id);
    expect(third.duplicateOf).toBe(other.id);
    expect(both.duplicateOf).toBe(first.id);
    const inOtherOrg = (await createLead(b, { name: 'Dup B', email: 'dup@example.com' })).body.data.lead;
    expect(inOtherOrg.duplicateOf).toBeNull();
  });

  it('records lead.created in the outbox with contact fields masked', async () => {
    const lead = (await createLead(a, { name: 'Evented', email: 'evented@example.com', phoneNumber: '+14155550123' })).body.data.lead;
    const events = await listEvents(t.ctx.database.db, a.orgId, { objectId: lead.id });
    expect(events).toHaveLength(1);
    const [event] = events;
    expect(event).toMatchObject({
      type: 'lead.created',
      organization: a.orgId,
      data: {
        object: 'lead',
        id: lead.id,
        actor: { type: 'API_KEY', id: a.keyId, channel: 'API' },
        changes: { before: {}, after: { name: 'Evented', email: '[encrypted]', phoneNumber: '[encrypted]', status: 'NEW' } },
      },
    });
    expect(event!.id).toMatch(/^evt_[0-9a-f]+$/);
    expect(JSON.stringify(event)).not.toContain('evented@example.com');
  });
});

describe('GET /leads/{id}', () => {
  it('returns the lead, and 404 for an unknown id or another organization\'s lead', async () => {
    const lead = (await createLead(a, { name: 'Readable' })).body.data.lead;
    const got = await call(t.app, 'GET', `/leads/${lead.id}`, { auth: a.auth });
    expect(got.status).toBe(200);
    expect(got.body.data.lead).toEqual(lead);
    expectError(await call(t.app, 'GET', `/leads/${lead.id}`, { auth: b.auth }), 404, 'NOT_FOUND');
    expectError(await call(t.app, 'GET', '/leads/0000000000000000deadbeef', { auth: a.auth }), 404, 'NOT_FOUND');
    expectError(await call(t.app, 'GET', '/leads/not-an-id', { auth: a.auth }), 404, 'NOT_FOUND');
  });
});

describe('PATCH /leads/{id}', () => {
  it('changes only the sent fields, clears with null, and records lead.updated with before/after', async () => {
    const lead = (await createLead(a, { name: 'Patchy', email: 'patchy@example.com', company: 'Old Co' })).body.data.lead;
    const res = await call(t.app, 'PATCH', `/leads/${lead.id}`, { auth: a.auth, body: { status: 'QUALIFIED', company: null, email: 'New@Example.com' } });
    expect(res.status).toBe(200);
    expect(res.body.data.lead).toMatchObject({ name: 'Patchy', status: 'QUALIFIED', company: null, email: 'new@example.com' });
    expect(res.body.data.lead.updatedAt >= lead.updatedAt).toBe(true);
    const events = await listEvents(t.ctx.database.db, a.orgId, { objectId: lead.id });
    expect(events.map((e) => e.type)).toEqual(['lead.created', 'lead.updated']);
    expect(events[1]!.data.changes).toEqual({
      before: { status: 'NEW', company: 'Old Co', email: '[encrypted]' },
      after: { status: 'QUALIFIED', company: null, email: '[encrypted]' },
    });
    const found = await call(t.app, 'GET', '/leads?q=new@example.com', { auth: a.auth });
    expect(found.body.data.leads.map((l: { id: string }) => l.id)).toEqual([lead.id]);
    const old = await call(t.app, 'GET', '/leads?q=patchy@example.com', { auth: a.auth });
    expect(old.body.data.leads).toEqual([]);
  });

  it('records no event when nothing changes', async () => {
    const lead = (await createLead(a, { name: 'Same', status: 'NEW' })).body.data.lead;
    const res = await call(t.app, 'PATCH', `/leads/${lead.id}`, { auth: a.auth, body: { status: 'NEW' } });
    expect(res.status).toBe(200);
    expect(res.body.data.lead.updatedAt).toBe(lead.updatedAt);
    expect(await listEvents(t.ctx.database.db, a.orgId, { objectId: lead.id })).toHaveLength(1);
  });

  it('refuses an empty body, unknown fields, and another organization\'s lead', async () => {
    const lead = (await createLead(a, { name: 'Guarded' })).body.data.lead;
    expectError(await call(t.app, 'PATCH', `/leads/${lead.id}`, { auth: a.auth, body: {} }), 400, 'VALIDATION_FAILED');
    expect(expectError(await call(t.app, 'PATCH', `/leads/${lead.id}`, { auth: a.auth, body: { nmae: 'typo' } }), 400, 'VALIDATION_FAILED')[0]).toMatchObject({ field: 'nmae', code: 'unknown_field' });
    expectError(await call(t.app, 'PATCH', `/leads/${lead.id}`, { auth: b.auth, body: { name: 'Stolen' } }), 404, 'NOT_FOUND');
    const after = await call(t.app, 'GET', `/leads/${lead.id}`, { auth: a.auth });
    expect(after.body.data.lead.name).toBe('Guarded');
  });
});

describe('GET /leads search and pagination', () => {
  let s: Seeded;
  beforeAll(async () => {
    s = await seedOrg(t.ctx);
    const names = ['Grace Hopper', 'Grace Kelly', 'Alan Turing', 'Al Green', 'O\'Brien "Bob" 100%_sure\\', 'Zoë Ärger'];
    for (const [i, name] of names.entries()) {
      await createLead(s, { name, email: `person${i}@example.com`, phoneNumber: `+1415555010${i}` });
    }
  });
  const search = async (q: string) => (await call(t.app, 'GET', `/leads?q=${encodeURIComponent(q)}`, { auth: s.auth })).body.data.leads.map((l: { name: string }) => l.name);

  it('finds by case-insensitive name substring, newest first', async () => {
    expect(await search('GRACE')).toEqual(['Grace Kelly', 'Grace Hopper']);
    expect(await search('urin')).toEqual(['Alan Turing']);
    expect(await search('zoë')).toEqual(['Zoë Ärger']);
  });

  it('handles 1–2 character queries', async () => {
    expect(await search('Al')).toEqual(['Al Green', 'Alan Turing']);
    expect((await search('e')).length).toBeGreaterThanOrEqual(4);
  });

  it('treats SQL and FTS syntax in q literally', async () => {
    expect(await search('100%_sure\\')).toEqual(['O\'Brien "Bob" 100%_sure\\']);
    expect(await search('"Bob"')).toEqual(['O\'Brien "Bob" 100%_sure\\']);
    for (const q of ['%', '_', '*', 'NEAR', 'Grace OR Alan', 'a*', '^Gr', "' or 1=1 --", '"', '\\']) {
      const res = await call(t.app, 'GET', `/leads?q=${encodeURIComponent(q)}`, { auth: s.auth });
      expect(res.status, q).toBe(200);
    }
    expect(await search('%')).toEqual(['O\'Brien "Bob" 100%_sure\\']);
    expect(await search('Grace OR Alan')).toEqual([]);
  });

  it('looks up an exact e-mail (any case) and an exact phone in any international notation', async () => {
    expect(await search('PERSON2@example.com')).toEqual(['Alan Turing']);
    expect(await search('+1 415 555 0103')).toEqual(['Al Green']);
    expect(await search('+14155550103')).toEqual(['Al Green']);
    expect(await search('person2@example')).toEqual([]);
  });

  it('decodes %2B as + in a phone query', async () => {
    const res = await call(t.app, 'GET', '/leads?q=%2B14155550100', { auth: s.auth });
    expect(res.body.data.leads.map((l: { name: string }) => l.name)).toEqual(['Grace Hopper']);
  });

  it('paginates with page/limit and reports totals', async () => {
    const res = await call(t.app, 'GET', '/leads?page=2&limit=4', { auth: s.auth });
    expect(res.status).toBe(200);
    expect(res.body.data.pagination).toEqual({ page: 2, limit: 4, total: 6, totalPages: 2, hasMore: false, nextCursor: null });
    expect(res.body.data.leads).toHaveLength(2);
    const first = await call(t.app, 'GET', '/leads?limit=4', { auth: s.auth });
    expect(first.body.data.pagination).toMatchObject({ page: 1, hasMore: true });
  });

  it('refuses bad paging and unknown query parameters', async () => {
    for (const qs of ['limit=0', 'limit=101', 'page=0', 'page=abc', 'limt=5']) {
      expectError(await call(t.app, 'GET', `/leads?${qs}`, { auth: s.auth }), 400, 'VALIDATION_FAILED');
    }
  });

  it('never lists another organization\'s leads', async () => {
    const other = await call(t.app, 'GET', '/leads?q=Grace', { auth: a.auth });
    expect(other.body.data.leads).toEqual([]);
    const byEmail = await call(t.app, 'GET', '/leads?q=person0@example.com', { auth: a.auth });
    expect(byEmail.body.data.leads).toEqual([]);
  });
});

describe('assignment rules', () => {
  it('assigns a fixed owner on a source/campaign match, before lead.created is recorded', async () => {
    const o = await seedOrg(t.ctx);
    const rep = await addUser(t.ctx, o.orgId);
    await setAssignmentRules(t.ctx.database, o.orgId, { rules: [{ id: 'web-spring', match: { source: 'WEBSITE', sourceCampaign: 'spring' }, assign: { type: 'user', userId: rep } }] }, new Date());
    const matched = (await createLead(o, { name: 'M', source: 'WEBSITE', sourceCampaign: 'spring' })).body.data.lead;
    const unmatched = (await createLead(o, { name: 'U', source: 'WEBSITE', sourceCampaign: 'autumn' })).body.data.lead;
    const explicit = (await createLead(o, { name: 'E', source: 'WEBSITE', sourceCampaign: 'spring', ownerId: o.userId })).body.data.lead;
    expect(matched.ownerId).toBe(rep);
    expect(unmatched.ownerId).toBeNull();
    expect(explicit.ownerId).toBe(o.userId);
    const [event] = await listEvents(t.ctx.database.db, o.orgId, { objectId: matched.id });
    expect(event!.data.changes.after.ownerId).toBe(rep);
  });

  it('round-robin stays fair under concurrent creates', async () => {
    const o = await seedOrg(t.ctx, { rateLimitPerMinute: 1000 });
    const reps = [await addUser(t.ctx, o.orgId), await addUser(t.ctx, o.orgId), await addUser(t.ctx, o.orgId)];
    await setAssignmentRules(t.ctx.database, o.orgId, { rules: [{ id: 'rr', match: {}, assign: { type: 'round_robin', userIds: reps } }] }, new Date());
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => createLead(o, { name: `RR ${i}` })));
    const counts = new Map<string, number>();
    for (const r of results) {
      expect(r.status).toBe(201);
      counts.set(r.body.data.lead.ownerId, (counts.get(r.body.data.lead.ownerId) ?? 0) + 1);
    }
    expect([...counts.entries()].sort()).toEqual(reps.map((id) => [id, 10]).sort());
  });

  it('refuses rules naming users of another organization or duplicate ids', async () => {
    const o = await seedOrg(t.ctx);
    await expect(setAssignmentRules(t.ctx.database, o.orgId, { rules: [{ id: 'x', match: {}, assign: { type: 'user', userId: a.userId } }] }, new Date())).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(setAssignmentRules(t.ctx.database, o.orgId, { rules: [{ id: 'x', match: {}, assign: { type: 'user', userId: o.userId } }, { id: 'x', match: {}, assign: { type: 'user', userId: o.userId } }] }, new Date())).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(setAssignmentRules(t.ctx.database, o.orgId, { rules: [{ id: 'x', match: { source: 'TV' }, assign: { type: 'user', userId: o.userId } }] }, new Date())).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
  });
});

describe('query parameters a route does not declare', () => {
  it('are refused with 400 naming them, before anything is written, on every route of the API but its document', async () => {
    const o = await seedOrg(t.ctx);
    const dryRun = await call(t.app, 'POST', '/leads?dryRun=true', { auth: o.auth, body: { name: 'Not written' } });
    expect(expectError(dryRun, 400, 'VALIDATION_FAILED')).toEqual([{ field: 'dryRun', code: 'unknown_field', message: 'is not a known field' }]);
    expect(await listEvents(t.ctx.database.db, o.orgId)).toEqual([]);
    const lead = (await createLead(o, { name: 'Kept' })).body.data.lead;
    for (const [method, path, body] of [
      ['GET', `/leads/${lead.id}?expand=account`, undefined],
      ['PATCH', `/leads/${lead.id}?upsert=true`, { name: 'Changed' }],
      ['POST', '/leads/batch?upsertBy=email', { items: [{ name: 'Batch' }] }],
      ['PATCH', '/leads/batch?dryRun=1', { items: [{ id: lead.id, name: 'Changed' }] }],
      ['GET', '/me?verbose=true', undefined],
    ] as const) {
      const res = await call(t.app, method, path, { auth: o.auth, ...(body ? { body } : {}) });
      expect(expectError(res, 400, 'VALIDATION_FAILED')[0], `${method} ${path}`).toMatchObject({ code: 'unknown_field' });
    }
    expect((await call(t.app, 'GET', `/leads/${lead.id}`, { auth: o.auth })).body.data.lead.name).toBe('Kept');
    expect((await call(t.app, 'GET', '/api/public/v1/openapi.json?v=1')).status).toBe(200);
  });
});
