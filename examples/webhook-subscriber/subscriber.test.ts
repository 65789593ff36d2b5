import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createClient, type WebhookEvent } from '@crm/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../../src/modules/events/outbox.store.js';
import { generateWebhookSecret, signDelivery } from '../../src/modules/webhooks/signature.js';
import { buildTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { addKey, seedOrg, type Seeded } from '../../test/helpers/seed.js';
import { call } from '../../test/helpers/http.js';
import { eventually } from '../../test/helpers/receiver.js';
import { listen } from '../../test/helpers/mcp.js';
import { startHarness, type Harness } from '../../test/helpers/webhooks.js';
import { createSubscriber, enrichLead } from './subscriber.js';

type Processed = { eventId: string; outcome: string; error?: Error };

describe('example webhook subscriber', () => {
  const secret = generateWebhookSecret();
  let t: TestApp;
  let website: Seeded;
  let subscriberKeyId: string;
  let endpoint: string;
  let subscriber: ReturnType<typeof createSubscriber>;
  let gate: Promise<void> = Promise.resolve();
  const handled: string[] = [];
  const currentOf = new Map<string, unknown>();

  /** The next `processed` outcome of the subscriber's background work. */
  const nextOutcome = () => once(subscriber.events, 'processed').then(([p]) => p as Processed);

  /** Posts an event as the dispatcher does: exact body bytes, fresh `t`, signature header. */
  function deliver(event: unknown, opts: { secret?: string; timestamp?: number } = {}) {
    const body = JSON.stringify(event);
    const timestamp = opts.timestamp ?? Math.floor(Date.now() / 1000);
    const headers = signDelivery({ secrets: [opts.secret ?? secret], eventId: (event as WebhookEvent).id, timestamp, body });
    return fetch(endpoint, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body });
  }

  const eventsOf = async (leadId: string) => (await listEvents(t.ctx.database.db, website.orgId, { objectId: leadId })) as unknown as WebhookEvent[];

  beforeAll(async () => {
    t = await buildTestApp();
    const origin = await listen(t);
    website = await seedOrg(t.ctx);
    const own = await addKey(t.ctx, website.orgId, ['leads:read', 'leads:write', 'accounts:read', 'deals:read', 'records:read']);
    subscriberKeyId = own.keyId;
    const client = createClient({ baseUrl: origin, apiKey: own.key });
    subscriber = createSubscriber({
      client,
      secret,
      self: { keyId: (await client.me.get()).key.id },
      handle: async (work: Parameters<typeof enrichLead>[0]) => {
        await gate;
        handled.push(work.event.id);
        currentOf.set(work.event.id, work.current);
        await enrichLead(work);
      },
    });
    subscriber.server.listen(0, '127.0.0.1');
    await once(subscriber.server, 'listening');
    endpoint = `http://127.0.0.1:${(subscriber.server.address() as AddressInfo).port}/webhooks/crm`;
  });
  afterAll(async () => {
    subscriber?.server.close();
    await t?.close();
  });

  it('answers 204 before its work is done, then fetches the current lead and enriches it', async () => {
    const created = await call(t.app, 'POST', '/leads', { auth: website.auth, body: { name: 'Ada Lovelace', email: 'ada@analytical.example' } });
    const [event] = await eventsOf(created.body.data.lead.id);
    let open!: () => void;
    gate = new Promise((resolve) => (open = resolve));
    const outcome = nextOutcome();
    const res = await deliver(event);
    expect(res.status).toBe(204);
    expect(handled).not.toContain(event!.id);
    open();
    expect(await outcome).toMatchObject({ eventId: event!.id, outcome: 'handled' });
    const lead = await call(t.app, 'GET', `/leads/${event!.data.id}`, { auth: website.auth });
    expect(lead.body.data.lead.company).toBe('Analytical');
  });

  it('skips its own echo (its key, channel API), and does not loop', async () => {
    const created = await call(t.app, 'POST', '/leads', { auth: website.auth, body: { name: 'Charles Babbage', email: 'charles@engines.example' } });
    const [first] = await eventsOf(created.body.data.lead.id);
    const outcome = nextOutcome();
    await deliver(first);
    expect((await outcome).outcome).toBe('handled');
    const [, echo] = await eventsOf(created.body.data.lead.id);
    expect(echo).toMatchObject({ type: 'lead.updated', data: { actor: { id: subscriberKeyId, channel: 'API' }, changes: { after: { company: 'Engines' } } } });
    const skipped = nextOutcome();
    expect((await deliver(echo)).status).toBe(204);
    expect(await skipped).toEqual({ eventId: echo!.id, outcome: 'echo' });
    expect(handled).not.toContain(echo!.id);
    expect(await eventsOf(created.body.data.lead.id)).toHaveLength(2);
  });

  it('handles a change made with the same key through another channel (MCP): not an echo', async () => {
    const created = await call(t.app, 'POST', '/leads', { auth: website.auth, body: { name: 'Mary Somerville' } });
    const [event] = await eventsOf(created.body.data.lead.id);
    const viaMcp = { ...event!, id: 'evt_mcp_same_key', data: { ...event!.data, actor: { type: 'API_KEY', id: subscriberKeyId, channel: 'MCP' } } };
    const outcome = nextOutcome();
    await deliver(viaMcp);
    expect(await outcome).toEqual({ eventId: 'evt_mcp_same_key', outcome: 'handled' });
  });

  it('hands over the record as it is now, not as the (late) event describes it', async () => {
    const created = await call(t.app, 'POST', '/deals', { auth: website.auth, body: { name: 'Forty seats' } });
    const id = created.body.data.deal.id;
    await call(t.app, 'PATCH', `/deals/${id}`, { auth: website.auth, body: { stage: 'proposal' } });
    await call(t.app, 'PATCH', `/deals/${id}`, { auth: website.auth, body: { stage: 'won' } });
    const events = await listEvents(t.ctx.database.db, website.orgId, { objectId: id });
    const late = events.find((e) => e.type === 'deal.stage_changed')!;
    expect(late.data.changes.after).toEqual({ stage: 'proposal' });
    const outcome = nextOutcome();
    await deliver(late);
    expect((await outcome).outcome).toBe('handled');
    expect(currentOf.get(late.id)).toMatchObject({ id, stage: 'won' });
  });

  it("fetches a custom-object record through its object's slug", async () => {
    const object = { slug: 'tickets', name: 'Tickets', fields: [{ key: 'subject', label: 'Subject', type: 'text', required: true }] };
    expect((await call(t.app, 'POST', '/objects', { auth: website.auth, body: object })).status).toBe(201);
    const created = await call(t.app, 'POST', '/objects/tickets/records', { auth: website.auth, body: { subject: 'Printer on fire' } });
    const [event] = await eventsOf(created.body.data.record.id);
    expect(event).toMatchObject({ type: 'record.created', data: { objectSlug: 'tickets' } });
    const outcome = nextOutcome();
    await deliver(event);
    expect((await outcome).outcome).toBe('handled');
    expect(currentOf.get(event!.id)).toMatchObject({ id: created.body.data.record.id, subject: 'Printer on fire' });
  });

  it('dedupes a redelivered event by its id (at-least-once delivery)', async () => {
    const created = await call(t.app, 'POST', '/leads', { auth: website.auth, body: { name: 'Hertha Ayrton' } });
    const [event] = await eventsOf(created.body.data.lead.id);
    const first = nextOutcome();
    await deliver(event);
    expect((await first).outcome).toBe('handled');
    const again = nextOutcome();
    expect((await deliver(event)).status).toBe(204);
    expect(await again).toEqual({ eventId: event!.id, outcome: 'duplicate' });
    expect(handled.filter((id) => id === event!.id)).toHaveLength(1);
  });

  it('refuses with 400 a wrong signature, a stale timestamp and an unsigned post, without processing them', async () => {
    const created = await call(t.app, 'POST', '/leads', { auth: website.auth, body: { name: 'Nobody' } });
    const [event] = await eventsOf(created.body.data.lead.id);
    let processed = 0;
    const count = () => (processed += 1);
    subscriber.events.on('processed', count);
    expect((await deliver(event, { secret: generateWebhookSecret() })).status).toBe(400);
    expect((await deliver(event, { timestamp: Math.floor(Date.now() / 1000) - 600 })).status).toBe(400);
    expect((await fetch(endpoint, { method: 'POST', body: JSON.stringify(event) })).status).toBe(400);
    subscriber.events.off('processed', count);
    expect(processed).toBe(0);
    expect(handled).not.toContain(event!.id);
  });
});

describe('example webhook subscriber fed by the real dispatcher', () => {
  let h: Harness;
  let subscriber: ReturnType<typeof createSubscriber>;
  const outcomes: Processed[] = [];

  afterAll(async () => {
    subscriber?.server.close();
    await h?.close();
  });

  it('enriches a new lead from its delivery, then recognises the delivery of its own change as an echo', async () => {
    h = await startHarness();
    const origin = await listen(h.t);
    const website = await seedOrg(h.t.ctx, { rateLimitPerMinute: 100_000 });
    const own = await addKey(h.t.ctx, website.orgId, ['leads:read', 'leads:write']);
    // The endpoint's secret is needed to start the subscriber, whose port is needed for the endpoint's URL.
    const created = await call(h.t.app, 'POST', '/webhooks', { auth: website.auth, body: { url: 'http://127.0.0.1:9/placeholder', events: ['lead.created', 'lead.updated'] } });
    const { id: webhookId, secret } = created.body.data.webhook;
    subscriber = createSubscriber({ client: createClient({ baseUrl: origin, apiKey: own.key }), secret, self: { keyId: own.keyId }, handle: enrichLead });
    subscriber.events.on('processed', (p: Processed) => outcomes.push(p));
    subscriber.server.listen(0, '127.0.0.1');
    await once(subscriber.server, 'listening');
    const url = `http://127.0.0.1:${(subscriber.server.address() as AddressInfo).port}/webhooks/crm`;
    expect((await call(h.t.app, 'PATCH', `/webhooks/${webhookId}`, { auth: website.auth, body: { url } })).status).toBe(200);

    const lead = await call(h.t.app, 'POST', '/leads', { auth: website.auth, body: { name: 'Grace Hopper', email: 'grace@cobol.example' } });
    // The echo may even be delivered before the subscriber's own PATCH has answered it.
    await eventually(() => expect(outcomes.map((o) => o.outcome).sort()).toEqual(['echo', 'handled']), 10_000);
    const current = await call(h.t.app, 'GET', `/leads/${lead.body.data.lead.id}`, { auth: website.auth });
    expect(current.body.data.lead.company).toBe('Cobol');
    // The dispatcher writes outcomes in batches, possibly after the subscriber has already moved on.
    await eventually(async () => {
      const log = await call(h.t.app, 'GET', `/webhooks/${webhookId}/deliveries`, { auth: website.auth });
      expect(log.body.data.deliveries.map((d: { eventType: string; status: string; responseStatus: number }) => [d.eventType, d.status, d.responseStatus])).toEqual([
        ['lead.updated', 'SUCCEEDED', 204],
        ['lead.created', 'SUCCEEDED', 204],
      ]);
    }, 10_000);
  });
});
