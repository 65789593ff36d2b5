import { createClient, CrmApiError, CrmConnectionError, type CrmClient } from '@crm/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../../src/modules/events/outbox.store.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { addKey, seedOrg, type Seeded } from '../helpers/seed.js';
import { listen } from '../helpers/mcp.js';
import { eventually } from '../helpers/receiver.js';

/** The SDK against the real server: the generated types, envelopes, errors and pagination match what is served. */
describe('SDK client against the API', () => {
  let t: TestApp;
  let origin: string;
  let s: Seeded;
  let crm: CrmClient;

  beforeAll(async () => {
    t = await buildTestApp();
    origin = await listen(t);
    s = await seedOrg(t.ctx);
    crm = createClient({ baseUrl: origin, apiKey: s.key });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('reads the identity of its key', async () => {
    const me = await crm.me.get();
    expect(me).toMatchObject({ organization: { id: s.orgId }, key: { id: s.keyId }, rateLimit: { limit: 120, windowSeconds: 60 } });
  });

  it('creates, gets and updates a lead', async () => {
    const lead = await crm.leads.create({ name: 'Ada Lovelace', email: 'ADA@example.com', phoneNumber: '+44 20 7946 0958', source: 'WEBSITE' });
    expect(lead).toMatchObject({ id: expect.stringMatching(/^[0-9a-f]{24}$/), email: 'ada@example.com', phoneNumber: '+442079460958', status: 'NEW' });
    expect(await crm.leads.get(lead.id)).toEqual(lead);
    const updated = await crm.leads.update(lead.id, { status: 'CONTACTED' });
    expect(updated).toMatchObject({ id: lead.id, status: 'CONTACTED' });
    const events = await listEvents(t.ctx.database.db, s.orgId, { objectId: lead.id });
    expect(events.map((e) => [e.type, e.data.actor.channel])).toEqual([['lead.created', 'API'], ['lead.updated', 'API']]);
  });

  it('replays a create sent twice with the same Idempotency-Key instead of creating a second lead', async () => {
    const first = await crm.leads.create({ name: 'Once Only' }, { idempotencyKey: 'sdk-test-once' });
    const second = await crm.leads.create({ name: 'Once Only' }, { idempotencyKey: 'sdk-test-once' });
    expect(second).toEqual(first);
    expect((await crm.leads.list({ q: 'Once Only' })).leads).toHaveLength(1);
    await expect(crm.leads.create({ name: 'Something else' }, { idempotencyKey: 'sdk-test-once' })).rejects.toMatchObject({ status: 422, code: 'IDEMPOTENCY_KEY_REUSED' });
  });

  it('iterates every lead across pages, newest first', async () => {
    const other = await seedOrg(t.ctx);
    const client = createClient({ baseUrl: `${origin}/api/public/v1/`, apiKey: other.key });
    const created = [];
    for (let i = 0; i < 7; i += 1) created.push((await client.leads.create({ name: `Paged ${i}` })).id);
    const seen = [];
    for await (const lead of client.leads.iterate({ limit: 3 })) seen.push(lead.id);
    expect(seen).toEqual([...created].reverse());
    const pages = [];
    for await (const page of client.leads.pages({ limit: 3 })) pages.push(page.leads.length);
    expect(pages).toEqual([3, 3, 1]);
  });

  it('reads the change feed: a page with its cursor, and every event through iterate', async () => {
    const org = await seedOrg(t.ctx);
    const client = createClient({ baseUrl: origin, apiKey: org.key });
    const leads = [];
    for (let i = 0; i < 5; i += 1) leads.push(await client.leads.create({ name: `Feed ${i}` }));
    await client.leads.update(leads[0]!.id, { status: 'CONTACTED' });
    const stored = await listEvents(t.ctx.database.db, org.orgId);
    // On PostgreSQL an event shows once every older transaction on the server has ended: wait for it (docs/sync.md).
    const first = await eventually(async () => {
      const page = await client.events.list({ limit: 2 });
      expect(page.events).toEqual(stored.slice(0, 2));
      return page;
    });
    await eventually(async () => {
      const rest = [];
      for await (const event of client.events.iterate({ after: first.nextCursor, limit: 2 })) rest.push(event);
      expect(rest).toEqual(stored.slice(2));
    });
    const updates = [];
    for await (const event of client.events.iterate({ types: ['lead.updated'] })) updates.push(event.data.id);
    expect(updates).toEqual([leads[0]!.id]);
    // pages: each page with its cursor, the last one empty, whose cursor resumes where this run stopped.
    const walked = [];
    let resumeAt: string | undefined;
    for await (const page of client.events.pages({ limit: 4 })) {
      walked.push(...page.events);
      resumeAt = page.nextCursor;
    }
    expect(walked).toEqual(stored);
    const second: string = leads[1]!.id;
    await client.leads.update(second, { status: 'CONTACTED' });
    await eventually(async () => {
      const later = [];
      for await (const page of client.events.pages({ after: resumeAt })) later.push(...page.events.map((e) => [e.type, e.data.id]));
      expect(later).toEqual([['lead.updated', second]]);
    });
    await expect(client.events.list({ after: 'bogus' })).rejects.toMatchObject({ status: 400, code: 'VALIDATION_FAILED' });
  });

  it('manages accounts and deals, including moving a deal to another stage', async () => {
    const account = await crm.accounts.create({ name: 'Analytical Engines Ltd', domain: 'analytical.example' });
    expect(await crm.accounts.get(account.id)).toEqual(account);
    expect(await crm.accounts.update(account.id, { industry: 'Computing' })).toMatchObject({ industry: 'Computing' });
    expect((await crm.accounts.list({ q: 'engines' })).accounts.map((a) => a.id)).toEqual([account.id]);
    expect((await crm.deals.stages()).map((st) => st.key)).toEqual(['qualification', 'proposal', 'negotiation', 'won', 'lost']);
    const deal = await crm.deals.create({ name: 'Forty seats', accountId: account.id, amount: '48000.00', currency: 'EUR' });
    expect(deal).toMatchObject({ stage: 'qualification', amount: '48000.00', accountId: account.id });
    expect(await crm.deals.moveStage(deal.id, 'negotiation')).toMatchObject({ id: deal.id, stage: 'negotiation' });
    const found = [];
    for await (const d of crm.deals.iterate({ accountId: account.id, stage: 'negotiation' })) found.push(d.id);
    expect(found).toEqual([deal.id]);
    const stageError = await crm.deals.moveStage(deal.id, 'celebrating').catch((e: unknown) => e);
    expect(stageError).toMatchObject({ status: 400, code: 'VALIDATION_FAILED', errors: [expect.objectContaining({ field: 'stage' })] });
    const events = await listEvents(t.ctx.database.db, s.orgId, { objectId: deal.id });
    expect(events.map((e) => e.type)).toEqual(['deal.created', 'deal.stage_changed']);
  });

  it('defines a custom object and manages its records', async () => {
    const object = await crm.objects.create({
      slug: 'tickets',
      name: 'Tickets',
      fields: [
        { key: 'subject', label: 'Subject', type: 'text', required: true },
        { key: 'due_on', label: 'Due on', type: 'date', role: 'due' },
      ],
      stages: [{ key: 'open', label: 'Open' }, { key: 'closed', label: 'Closed' }],
    });
    expect(await crm.objects.get('tickets')).toEqual(object);
    expect((await crm.objects.update('tickets', { name: 'Support tickets' })).name).toBe('Support tickets');
    const slugs = [];
    for await (const o of crm.objects.iterate()) slugs.push(o.slug);
    expect(slugs).toEqual(['tickets', 'leads', 'accounts', 'deals']);
    const tickets = crm.records('tickets');
    const record = await tickets.create({ subject: 'Printer on fire', due_on: '2026-03-01T15:00:00Z' });
    expect(record).toMatchObject({ objectSlug: 'tickets', stage: 'open', subject: 'Printer on fire', due_on: '2026-03-02T00:00:00.000Z' });
    expect(await tickets.get(record.id)).toEqual(record);
    expect(await tickets.moveStage(record.id, 'closed')).toMatchObject({ stage: 'closed' });
    expect(await tickets.update(record.id, { subject: 'Printer fixed' })).toMatchObject({ subject: 'Printer fixed' });
    const found = [];
    for await (const r of tickets.iterate({ q: 'fixed', stage: 'closed' })) found.push(r.id);
    expect(found).toEqual([record.id]);
    // Field filters, typed (FieldFilters): the keys docs/sdk.md shows compile and filter.
    const due = [];
    for await (const r of tickets.iterate({ 'filter[due_on][gte]': '2026-03-01', 'filter[due_on][lt]': '2026-03-03' })) due.push(r.id);
    expect(due).toEqual([record.id]);
    expect(await tickets.list({ 'filter[due_on][gt]': '2026-03-02' })).toMatchObject({ records: [] });
    await expect(tickets.create({ due_on: 'soon' })).rejects.toMatchObject({ code: 'VALIDATION_FAILED', errors: expect.arrayContaining([expect.objectContaining({ field: 'subject' }), expect.objectContaining({ field: 'due_on' })]) });
    await expect(crm.records('nothing').get(record.id)).rejects.toMatchObject({ status: 404 });
  });

  it('throws typed errors carrying code, field errors and the request id', async () => {
    const invalid = await crm.leads.create({ name: '', email: 'nope', phoneNumber: '4155550100' }).catch((e: unknown) => e);
    expect(invalid).toBeInstanceOf(CrmApiError);
    const error = invalid as CrmApiError;
    expect(error).toMatchObject({ status: 400, code: 'VALIDATION_FAILED', requestId: expect.stringMatching(/^req_/) });
    expect(error.errors.map((e) => e.field).sort()).toEqual(['email', 'name', 'phoneNumber']);
    await expect(crm.leads.get('000000000000000000000000')).rejects.toMatchObject({ status: 404, code: 'NOT_FOUND' });
    const reader = await addKey(t.ctx, s.orgId, ['leads:read']);
    const readOnly = createClient({ baseUrl: origin, apiKey: reader.key });
    await expect(readOnly.leads.create({ name: 'Nope' })).rejects.toMatchObject({ status: 403, code: 'INSUFFICIENT_SCOPE' });
    await expect(createClient({ baseUrl: origin, apiKey: 'crm_live_wrong' }).me.get()).rejects.toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
  });

  it('reports RATE_LIMITED with the seconds of Retry-After when it may not wait', async () => {
    const limited = await addKey(t.ctx, s.orgId, ['leads:read'], { rateLimitPerMinute: 1 });
    const client = createClient({ baseUrl: origin, apiKey: limited.key, maxRetries: 0 });
    await client.leads.list();
    const error = await client.leads.list().catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    expect((error as CrmApiError).retryAfter).toBeGreaterThan(0);
  });

  it('fails with CrmConnectionError when nothing answers', async () => {
    const client = createClient({ baseUrl: 'http://127.0.0.1:9', apiKey: s.key, maxRetries: 0 });
    await expect(client.me.get()).rejects.toBeInstanceOf(CrmConnectionError);
  });

  it('a body over BODY_LIMIT_BYTES fails with PAYLOAD_TOO_LARGE, not a connection error retried in vain', async () => {
    const error = await crm.leads.create({ name: 'Too big', notes: 'x'.repeat(3 * 1024 * 1024) }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CrmApiError);
    expect(error).toMatchObject({ status: 413, code: 'PAYLOAD_TOO_LARGE', message: expect.stringContaining('1048576 bytes') });
  });

  // privacy.erase / export / erasures (docs/privacy.md)
  it('privacy: exports, erases and lists erasures', async () => {
    const lead = await crm.leads.create({ name: 'Sdk Subject', email: 'sdk.subject@example.com' });
    const file = await crm.privacy.export({ email: 'sdk.subject@example.com' });
    expect(file.leads.map((l) => l.id)).toEqual([lead.id]);
    expect(file.deals).toEqual([]);
    const erasure = await crm.privacy.erase({ email: 'sdk.subject@example.com', reason: 'sdk test' });
    expect(erasure).toMatchObject({ status: 'completed', matched: { leads: 1, accounts: 0, deals: 0, records: 0 } });
    expect((await crm.privacy.erasures.list()).erasures.map((e) => e.id)).toEqual([erasure.id]);
    const iterated = [];
    for await (const past of crm.privacy.erasures.iterate()) iterated.push(past.id);
    expect(iterated).toEqual([erasure.id]);
    const justBefore = new Date(Date.parse(erasure.completedAt) - 1).toISOString();
    expect((await crm.privacy.erasures.list({ sort: 'createdAt', createdAfter: justBefore })).erasures.map((e) => e.id)).toEqual([erasure.id]);
    expect((await crm.privacy.erasures.list({ createdBefore: erasure.completedAt })).erasures).toEqual([]);
    expect((await crm.privacy.export({ email: 'sdk.subject@example.com' })).leads).toEqual([]);
  });

  it('privacy: a key without privacy:write gets INSUFFICIENT_SCOPE', async () => {
    const reader = createClient({ baseUrl: origin, apiKey: (await addKey(t.ctx, s.orgId, ['privacy:read'])).key });
    const err = await reader.privacy.erase({ email: 'x@example.com' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CrmApiError);
    expect((err as CrmApiError).code).toBe('INSUFFICIENT_SCOPE');
  });
});
