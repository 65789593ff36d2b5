import { createClient } from '@crm/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { pruneEvents } from '../../src/modules/events/feed.service.js';
import { undispatchedEvents } from '../../src/modules/webhooks/dispatch-lag.store.js';
import { WebhookDispatcher } from '../../src/modules/webhooks/dispatcher.js';
import { call } from '../../test/helpers/http.js';
import { listen } from '../../test/helpers/mcp.js';
import { eventually } from '../../test/helpers/receiver.js';
import { addKey, seedOrg, type Seeded } from '../../test/helpers/seed.js';
import { buildTestApp, type TestApp } from '../../test/helpers/test-app.js';
import { createMirror } from './mirror.js';

/** A CRM on a port for a mirror to read: an organization, and an SDK client with a key that reads leads, accounts and deals. */
async function openCrm(clock?: ManualClock) {
  const t = await buildTestApp(clock ? { clock } : {});
  const origin = await listen(t);
  const org = await seedOrg(t.ctx, { rateLimitPerMinute: 100_000 });
  const reader = await addKey(t.ctx, org.orgId, ['leads:read', 'accounts:read', 'deals:read'], { rateLimitPerMinute: 100_000 });
  return { t, org, client: createClient({ baseUrl: origin, apiKey: reader.key }) };
}

/** A write by the organization's own key, which must succeed. */
async function writeAs(t: TestApp, org: Seeded, method: string, path: string, body?: unknown) {
  const res = await call(t.app, method, path, { auth: org.auth, body });
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  return res.body.data;
}

/*
 * The sync example of docs/sync.md against a real CRM: the mirror loads while others write, follows the feed,
 * survives a restart from its saved state, and ends equal to the CRM — creates, updates, deletes and an erasure.
 */
describe('example sync mirror', () => {
  let t: TestApp;
  let org: Seeded;
  let client: ReturnType<typeof createClient>;

  beforeAll(async () => {
    ({ t, org, client } = await openCrm());
  });
  afterAll(() => t.close());

  const write = (method: string, path: string, body?: unknown) => writeAs(t, org, method, path, body);
  const createLead = async (i: number) => (await write('POST', '/leads', { name: `Lead ${i}`, email: `lead${i}@example.com` })).lead.id as string;

  /** Every live item, as the API shows it now. */
  async function truth() {
    const all: Record<string, Record<string, unknown>> = { leads: {}, accounts: {}, deals: {} };
    for (const resource of ['leads', 'accounts', 'deals'] as const) {
      for await (const item of client[resource].iterate({ limit: 100 })) all[resource]![(item as { id: string }).id] = item;
    }
    return all;
  }

  /** Follows until the copy equals the CRM (on PostgreSQL an event shows once older transactions have ended). */
  async function converge(mirror: ReturnType<typeof createMirror>) {
    const expected = await truth();
    await eventually(async () => {
      await mirror.follow();
      expect(mirror.state.items).toEqual(expected);
    }, 20_000, 50);
  }

  it('loads while others write, follows the feed, resumes from its saved state, and ends equal to the CRM', async () => {
    const leads = [];
    for (let i = 0; i < 130; i++) leads.push(await createLead(i));
    const account = (await write('POST', '/accounts', { name: 'Analytical Engines' })).account.id;
    await write('POST', '/deals', { name: 'Engine', accountId: account });

    let saved = '';
    const mirror = createMirror({ client, save: async (state: unknown) => { saved = JSON.stringify(state); } });
    // Writes racing the initial load: new items, changes to loaded ones, deletions.
    const racing = (async () => {
      for (let i = 0; i < 20; i++) {
        await createLead(1000 + i);
        await write('PATCH', `/leads/${leads[i]}`, { status: 'CONTACTED' });
        await write('DELETE', `/leads/${leads[100 + i]}`);
      }
    })();
    await Promise.all([mirror.load(), racing]);
    await converge(mirror);
    expect(Object.keys(mirror.state.items.leads)).toHaveLength(130 + 20 - 20);
    const cursorBeforeRestart = mirror.state.cursor;

    // A restart from the saved state; meanwhile the CRM changes on.
    const restarted = createMirror({ client, state: JSON.parse(saved), save: async (state: unknown) => { saved = JSON.stringify(state); } });
    await write('PATCH', `/leads/${leads[50]}`, { company: 'Analytical Engines' });
    await write('POST', `/leads/${leads[100]}/restore`);
    await write('POST', '/privacy/erasures', { email: 'lead7@example.com' });
    await write('PATCH', `/accounts/${account}`, { name: 'Difference Engines' });
    await converge(restarted);
    expect(restarted.state.items.leads[leads[7]!]).toBeUndefined();
    expect(restarted.state.items.leads[leads[100]!]).toBeDefined();
    expect(restarted.state.items.leads[leads[50]!]).toMatchObject({ company: 'Analytical Engines' });

    // Reading the feed again from an older cursor (a crash before the cursor was saved) applies nothing twice.
    const replay = createMirror({ client, state: { ...JSON.parse(saved), cursor: cursorBeforeRestart } });
    expect(await replay.follow()).toBe(0);
    // Without the remembered ids the same events would be applied again.
    const forgetful = createMirror({ client, state: { ...JSON.parse(saved), cursor: cursorBeforeRestart, applied: [] } });
    expect(await forgetful.follow()).toBeGreaterThanOrEqual(4);
    expect(forgetful.state.items).toEqual(restarted.state.items);
  }, 120_000);
});

describe('example sync mirror, stopped longer than the feed keeps events', () => {
  const clock = new ManualClock('2026-03-01T00:00:00.000Z');
  let t: TestApp;
  let org: Seeded;
  let client: ReturnType<typeof createClient>;

  beforeAll(async () => {
    ({ t, org, client } = await openCrm(clock));
  });
  afterAll(() => t.close());

  const write = (method: string, path: string, body?: unknown) => writeAs(t, org, method, path, body);

  it('loads every list again when its cursor answers 410 CURSOR_EXPIRED, and follows on from there', async () => {
    const kept = (await write('POST', '/leads', { name: 'Kept' })).lead.id as string;
    const gone = (await write('POST', '/leads', { name: 'Gone' })).lead.id as string;
    const mirror = createMirror({ client });
    await mirror.load();
    // While the mirror is stopped: changes whose events outlive it no longer than the retention (30 days).
    await write('PATCH', `/leads/${kept}`, { company: 'Analytical Engines' });
    await write('DELETE', `/leads/${gone}`);
    clock.set('2026-04-05T00:00:00.000Z');
    const later = (await write('POST', '/leads', { name: 'Later' })).lead.id as string;
    // The dispatcher's fan-out passes every event, then its housekeeping prunes those past the retention.
    const dispatcher = new WebhookDispatcher(t.ctx, { pollIntervalMs: 20 }).start();
    await eventually(async () => expect((await undispatchedEvents(t.ctx.database.db, t.ctx.database.dialect)).count).toBe(0));
    await dispatcher.stop();
    await pruneEvents(t.ctx);
    await expect(client.events.list({ after: mirror.state.cursor! })).rejects.toMatchObject({ status: 410, code: 'CURSOR_EXPIRED' });

    await mirror.follow();
    expect(Object.keys(mirror.state.items.leads).sort()).toEqual([kept, later].sort());
    expect(mirror.state.items.leads[kept]).toMatchObject({ company: 'Analytical Engines' });
    // The cursor is a live one again: the next change comes through the feed.
    await write('PATCH', `/leads/${later}`, { title: 'CTO' });
    await eventually(async () => {
      await mirror.follow();
      expect(mirror.state.items.leads[later]).toMatchObject({ title: 'CTO' });
    }, 20_000, 50);
  }, 60_000);
});
