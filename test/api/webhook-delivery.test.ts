import type dns from 'node:dns';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebhookDispatcher } from '../../src/modules/webhooks/dispatcher.js';
import { createWebhook } from '../../src/modules/webhooks/webhooks.service.js';
import { setAssignmentRules } from '../../src/modules/orgs/rules.service.js';
import { inTransaction } from '../../src/db/transaction.js';
import { call } from '../helpers/http.js';
import { eventually, verifyBoth } from '../helpers/receiver.js';
import { addUser } from '../helpers/seed.js';
import { createLead, deliveries, endpoint, latestDelivery, startHarness, webhook, type Harness } from '../helpers/webhooks.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

describe('delivery of events', () => {
  it('sends lead.created and lead.updated with the contract body and headers, verified by Stripe and Standard Webhooks', async () => {
    const e = await endpoint(h);
    const rep = await addUser(h.t.ctx, e.org.orgId);
    await setAssignmentRules(h.t.ctx.database, e.org.orgId, { rules: [{ id: 'web', match: { source: 'WEBSITE' }, assign: { type: 'user', userId: rep } }] }, h.clock.now());
    const lead = await createLead(h, e.org, { name: 'Ada', email: 'ada@example.com', phoneNumber: '+14155550100', source: 'WEBSITE' });
    const [created] = await h.receiver.waitFor(e.path, 1);
    const body = verifyBoth(created!, e.secret);
    expect(body).toEqual({
      id: expect.stringMatching(/^evt_[0-9a-f]{24}$/),
      type: 'lead.created',
      createdAt: lead.createdAt,
      organization: e.org.orgId,
      data: {
        object: 'lead',
        id: lead.id,
        description: expect.any(String),
        changes: {
          before: {},
          // Assignment rules ran before the event was recorded: the owner is in it.
          after: { name: 'Ada', email: '[encrypted]', phoneNumber: '[encrypted]', source: 'WEBSITE', status: 'NEW', ownerId: rep },
        },
        actor: { type: 'API_KEY', id: e.org.keyId, channel: 'API' },
      },
    });
    expect(created!.body).not.toContain('ada@example.com');
    expect(created!.body).not.toContain('4155550100');
    expect(created!.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': expect.stringMatching(/^crm-webhooks\//),
      'x-service-event': 'lead.created',
      'x-service-delivery': expect.stringMatching(/^[0-9a-f]{24}$/),
      'x-service-signature': expect.stringMatching(/^t=\d+,v1=[0-9a-f]{64}$/),
      'webhook-id': body.id,
      'webhook-timestamp': expect.stringMatching(/^\d+$/),
    });

    await call(h.t.app, 'PATCH', `/leads/${lead.id}`, { auth: e.org.auth, body: { status: 'CONTACTED', email: 'ada@lovelace.org' } });
    const updated = (await h.receiver.waitFor(e.path, 2))[1]!;
    expect(verifyBoth(updated, e.secret)).toMatchObject({
      type: 'lead.updated',
      data: { id: lead.id, changes: { before: { status: 'NEW', email: '[encrypted]' }, after: { status: 'CONTACTED', email: '[encrypted]' } } },
    });
    expect(updated.headers['x-service-delivery']).not.toBe(created!.headers['x-service-delivery']);

    const log = await latestDelivery(h, e, (d) => expect(d.status).toBe('SUCCEEDED'));
    expect(log).toMatchObject({ eventType: 'lead.updated', attempt: 1, responseStatus: 200, responseExcerpt: 'ok', error: null, nextAttemptAt: null });
    expect(log.id).toBe(updated.headers['x-service-delivery']);
    expect(log.attempts).toEqual([{ attempt: 1, startedAt: expect.any(String), durationMs: expect.any(Number), responseStatus: 200, responseExcerpt: 'ok', error: null, succeeded: true }]);
  });

  it('sends webhook.test to the tested endpoint only', async () => {
    const one = await endpoint(h);
    const other = await endpoint(h, ['*'], one.org);
    const res = await call(h.t.app, 'POST', `/webhooks/${one.id}/test`, { auth: one.org.auth });
    const [received] = await h.receiver.waitFor(one.path, 1);
    expect(verifyBoth(received!, one.secret)).toMatchObject({
      id: res.body.data.delivery.eventId,
      type: 'webhook.test',
      organization: one.org.orgId,
      data: { object: 'webhook', id: one.id, changes: { before: {}, after: {} }, actor: { type: 'API_KEY', id: one.org.keyId, channel: 'API' } },
    });
    // A later event reaches both; the test event never reached the other endpoint.
    await createLead(h, one.org);
    await h.receiver.waitFor(other.path, 1);
    await h.receiver.waitFor(one.path, 2);
    expect(h.receiver.requests(other.path).map((r) => r.headers['x-service-event'])).toEqual(['lead.created']);
  });

  it('follows each endpoint’s event filter; disabled endpoints get nothing', async () => {
    const all = await endpoint(h, ['*']);
    const updatedOnly = await endpoint(h, ['lead.updated'], all.org);
    const createdOnly = await endpoint(h, ['lead.created', 'deal.created'], all.org);
    const disabled = await endpoint(h, ['*'], all.org);
    await call(h.t.app, 'PATCH', `/webhooks/${disabled.id}`, { auth: all.org.auth, body: { enabled: false } });
    const lead = await createLead(h, all.org);
    await call(h.t.app, 'PATCH', `/leads/${lead.id}`, { auth: all.org.auth, body: { title: 'CTO' } });
    await h.receiver.waitFor(all.path, 2);
    await h.receiver.waitFor(updatedOnly.path, 1);
    await h.receiver.waitFor(createdOnly.path, 1);
    await h.settled();
    const types = (path: string) => h.receiver.requests(path).map((r) => r.headers['x-service-event']);
    expect(types(all.path).sort()).toEqual(['lead.created', 'lead.updated']);
    expect(types(updatedOnly.path)).toEqual(['lead.updated']);
    expect(types(createdOnly.path)).toEqual(['lead.created']);
    expect(types(disabled.path)).toEqual([]);
    expect(await deliveries(h, disabled)).toEqual([]);
  });

  it('signs with both secrets for 24 h after a rotation, then with the new one only', async () => {
    const e = await endpoint(h);
    const rotated = (await call(h.t.app, 'POST', `/webhooks/${e.id}/rotate-secret`, { auth: e.org.auth })).body.data.webhook;
    await createLead(h, e.org);
    const [during] = await h.receiver.waitFor(e.path, 1);
    expect(during!.headers['x-service-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(String(during!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    verifyBoth(during!, rotated.secret);
    verifyBoth(during!, e.secret);

    h.clock.advance(24 * 60 * 60 * 1000 + 1000);
    await createLead(h, e.org);
    const after = (await h.receiver.waitFor(e.path, 2))[1]!;
    expect(after.headers['x-service-signature']).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    verifyBoth(after, rotated.secret);
    expect(() => Stripe.webhooks.constructEvent(after.body, String(after.headers['x-service-signature']), e.secret)).toThrow(/signature/i);
  });

  it('a manual retry re-sends the same event and delivery id with a fresh signature', async () => {
    const e = await endpoint(h);
    await createLead(h, e.org);
    const [first] = await h.receiver.waitFor(e.path, 1);
    const done = await latestDelivery(h, e, (d) => expect(d.status).toBe('SUCCEEDED'));
    h.wall.advance(2_000);
    const res = await call(h.t.app, 'POST', `/webhooks/${e.id}/deliveries/${done.id}/retry`, { auth: e.org.auth });
    expect(res.status).toBe(200);
    const again = (await h.receiver.waitFor(e.path, 2))[1]!;
    expect(again.body).toBe(first!.body);
    expect(again.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect(again.headers['x-service-delivery']).toBe(done.id);
    expect(again.headers['x-service-signature']).not.toBe(first!.headers['x-service-signature']);
    verifyBoth(again, e.secret);
    const log = await latestDelivery(h, e, (d) => expect(d.attempts).toHaveLength(2));
    expect(log).toMatchObject({ id: done.id, status: 'SUCCEEDED', attempt: 2 });
  });
});

describe('isolation between endpoints', () => {
  it('a hanging endpoint never delays a healthy one', async () => {
    const dispatcher = await h.restart({ timeoutMs: 10_000, endpointConcurrency: 4 });
    const healthy = await endpoint(h);
    const hanging = await endpoint(h, ['*'], healthy.org);
    const held: { end(body: string): void }[] = [];
    h.receiver.on(hanging.path, (res) => held.push(res));
    for (let i = 0; i < 30; i++) await createLead(h, healthy.org, { name: `L${i}` });
    await h.receiver.waitFor(healthy.path, 30, 8_000);
    // All 30 arrived while the hanging endpoint still held each of its 4 slots (nothing timed out yet).
    expect(h.receiver.requests(hanging.path)).toHaveLength(4);
    h.receiver.on(hanging.path, (res) => res.end('ok'));
    for (const res of held) res.end('late');
    await dispatcher.settled();
    await h.restart();
  });
});

describe('SSRF guard at connect time', () => {
  /** DNS answering 127.0.0.1 for every name: the rebinding attack. */
  const rebinding = ((_host: string, _opts: unknown, cb: (err: null, addrs: { address: string; family: number }[]) => void) =>
    cb(null, [{ address: '127.0.0.1', family: 4 }])) as unknown as typeof dns.lookup;

  it('refuses a host name that resolves to loopback when connecting, and a loopback literal', async () => {
    await h.dispatcher.stop();
    const strict = new WebhookDispatcher(h.t.ctx, { pollIntervalMs: 20, allowPrivateNetworks: false, lookup: rebinding }).start();
    try {
      const e = await endpoint(h);
      // Registered while the name pointed to a public address (the check passed then).
      for (const url of [`https://rebind.example.test:${h.receiver.port}/in`, `https://127.0.0.1:${h.receiver.port}/in`]) {
        await inTransaction(h.t.ctx, (trx) => createWebhook(h.t.ctx, trx, e.org.orgId, { url, events: ['*'] }));
      }
      await call(h.t.app, 'PATCH', `/webhooks/${e.id}`, { auth: e.org.auth, body: { enabled: false } });
      await createLead(h, e.org);
      const errors = await eventually(async () => {
        const rows = await h.t.ctx.database.db
          .selectFrom('webhook_attempts as a')
          .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
          .select('a.error')
          .where('d.organization_id', '=', e.org.orgId)
          .execute();
        expect(rows).toHaveLength(2);
        return rows.map((r) => r.error).sort();
      });
      expect(errors).toEqual([
        'refusing to connect to 127.0.0.1: it resolves to a loopback address',
        'refusing to connect to rebind.example.test: it resolves to a loopback address',
      ]);
      expect(h.receiver.requests('/in')).toEqual([]);
    } finally {
      await strict.stop();
      await h.restart();
    }
  });
});

describe('restart', () => {
  it('stops at once while a fan-out spaced after the previous one is still to come', async () => {
    for (let i = 0; i < 5; i++) {
      await h.settled();
      h.dispatcher.wake(); // just after a fan-out ended: spaced, not run yet
      const started = Date.now();
      await h.restart();
      // The cleared fan-out used to be waited for until the grace period ran out (timeout + 5 s = 10 s).
      expect(Date.now() - started).toBeLessThan(4_000);
    }
  });

  it('delivers what was committed while no dispatcher ran', async () => {
    await h.dispatcher.stop();
    const e = await endpoint(h);
    for (let i = 0; i < 5; i++) await createLead(h, e.org, { name: `Offline ${i}` });
    expect(h.receiver.requests(e.path)).toEqual([]);
    await h.restart();
    const got = await h.receiver.waitFor(e.path, 5);
    await h.settled();
    expect(new Set(got.map((r) => r.headers['webhook-id'])).size).toBe(5);
    expect(h.receiver.requests(e.path)).toHaveLength(5);
    expect((await webhook(h, e)).failingSince).toBeNull();
  });
});
