import { createClient, isWhole, verifyWebhook, WebhookVerificationError, type CrmClient } from '@crm/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { callOk, connect, httpTransport, listen } from '../helpers/mcp.js';
import { eventually } from '../helpers/receiver.js';
import { startHarness, type Harness } from '../helpers/webhooks.js';

/** The SDK's webhook endpoints API and verifyWebhook, against deliveries made by the real dispatcher. */
describe('SDK webhooks with the real dispatcher', () => {
  let h: Harness;
  let org: Seeded;
  let crm: CrmClient;
  let origin: string;
  let paths = 0;

  /** A new endpoint on a fresh receiver path, created through the SDK. */
  async function subscribe(events: Parameters<CrmClient['webhooks']['create']>[0]['events']) {
    const path = `/sdk-${++paths}`;
    const webhook = await crm.webhooks.create({ url: h.receiver.url(path), events });
    expect(webhook.secret).toMatch(/^whsec_/);
    return { ...webhook, secret: webhook.secret!, path };
  }

  beforeAll(async () => {
    h = await startHarness();
    origin = await listen(h.t);
    org = await seedOrg(h.t.ctx, { rateLimitPerMinute: 100_000 });
    crm = createClient({ baseUrl: origin, apiKey: org.key });
  });
  afterAll(() => h?.close());

  it('verifies a delivery and returns the typed event; refuses another secret and a stale timestamp', async () => {
    const endpoint = await subscribe(['lead.created']);
    const lead = await crm.leads.create({ name: 'Ada Lovelace', email: 'ada@example.com' });
    const [received] = await h.receiver.waitFor(endpoint.path, 1);
    const event = await verifyWebhook(received!.body, received!.headers, endpoint.secret, { now: h.wall.now() });
    expect(event).toMatchObject({ type: 'lead.created', organization: org.orgId, data: { object: 'lead', id: lead.id, actor: { type: 'API_KEY', id: org.keyId, channel: 'API' } } });
    expect(event.data.changes.after).toMatchObject({ name: 'Ada Lovelace', email: '[encrypted]' });

    const other = await verifyWebhook(received!.body, received!.headers, 'whsec_c29tZW9uZSBlbHNlJ3Mgc2VjcmV0', { now: h.wall.now() }).catch((e: unknown) => e);
    expect(other).toBeInstanceOf(WebhookVerificationError);
    expect((other as WebhookVerificationError).reason).toBe('signature_mismatch');
    const later = new Date(h.wall.now().getTime() + 301_000);
    await expect(verifyWebhook(received!.body, received!.headers, endpoint.secret, { now: later })).rejects.toMatchObject({ reason: 'timestamp_out_of_tolerance' });
  });

  it('accepts both the new and the old secret while a rotated endpoint signs with each', async () => {
    const endpoint = await subscribe(['deal.created']);
    const rotated = await crm.webhooks.rotateSecret(endpoint.id);
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(endpoint.secret);
    if (!isWhole(rotated)) throw new Error('a key with webhooks:read gets the whole endpoint');
    expect(rotated.previousSecretExpiresAt).not.toBeNull();
    await crm.deals.create({ name: 'After the rotation' });
    const [received] = await h.receiver.waitFor(endpoint.path, 1);
    expect(String(received!.headers['x-service-signature']).match(/v1=/g)).toHaveLength(2);
    for (const secret of [rotated.secret!, endpoint.secret]) {
      await expect(verifyWebhook(received!.body, received!.headers, secret, { now: h.wall.now() })).resolves.toMatchObject({ type: 'deal.created' });
    }
  });

  it('delivers MCP writes with actor.channel MCP', async () => {
    const endpoint = await subscribe(['lead.created']);
    const agent = await connect(httpTransport(origin, org.key));
    try {
      const { lead } = await callOk(agent, 'create_lead', { name: 'Created by an agent' });
      const [received] = await h.receiver.waitFor(endpoint.path, 1);
      const event = await verifyWebhook(received!.body, received!.headers, endpoint.secret, { now: h.wall.now() });
      expect(event.data).toMatchObject({ id: lead.id, actor: { type: 'API_KEY', id: org.keyId, channel: 'MCP' } });
    } finally {
      await agent.close();
    }
  });

  it('manages endpoints: list, update, test event, delivery log, re-send, delete', async () => {
    const endpoint = await subscribe(['lead.updated']);
    expect((await crm.webhooks.get(endpoint.id)).secret).toBeUndefined();
    const updated = await crm.webhooks.update(endpoint.id, { description: 'CRM → warehouse' });
    if (!isWhole(updated)) throw new Error('a key with webhooks:read gets the whole endpoint');
    expect(updated.description).toBe('CRM → warehouse');
    const ids = [];
    for await (const w of crm.webhooks.iterate({ limit: 2 })) ids.push(w.id);
    expect(ids).toContain(endpoint.id);
    const receiving = async (query: { enabled?: boolean; eventType?: 'lead.updated' | 'deal.created' }) => (await crm.webhooks.list(query)).webhooks.map((w) => w.id);
    expect(await receiving({ enabled: true, eventType: 'lead.updated' })).toContain(endpoint.id);
    expect(await receiving({ eventType: 'deal.created' })).not.toContain(endpoint.id);
    expect(await receiving({ enabled: false })).not.toContain(endpoint.id);

    const queued = await crm.webhooks.test(endpoint.id);
    expect(queued).toMatchObject({ webhookId: endpoint.id, eventType: 'webhook.test' });
    const [received] = await h.receiver.waitFor(endpoint.path, 1);
    await expect(verifyWebhook(received!.body, received!.headers, endpoint.secret, { now: h.wall.now() })).resolves.toMatchObject({ type: 'webhook.test' });
    const log = crm.webhooks.deliveries(endpoint.id);
    const delivered = await eventually(async () => {
      const [d] = (await log.list({ status: 'SUCCEEDED' })).deliveries;
      expect(d?.id).toBe(queued.id);
      return d!;
    });
    expect(delivered.attempts[0]).toMatchObject({ responseStatus: 200, succeeded: true });
    const queuedSince = [];
    for await (const d of log.iterate({ sort: 'createdAt', createdAfter: new Date(Date.parse(queued.createdAt) - 1).toISOString(), limit: 1 })) queuedSince.push(d.id);
    expect(queuedSince).toEqual([queued.id]);
    expect((await log.list({ createdBefore: queued.createdAt })).deliveries).toEqual([]);
    await log.retry(queued.id);
    await h.receiver.waitFor(endpoint.path, 2);
    expect(JSON.parse(h.receiver.requests(endpoint.path)[1]!.body).id).toBe(JSON.parse(received!.body).id);

    expect(await crm.webhooks.delete(endpoint.id)).toEqual({ id: endpoint.id, deleted: true });
    await expect(crm.webhooks.get(endpoint.id)).rejects.toMatchObject({ status: 404, code: 'NOT_FOUND' });
  });
});
