import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { FEED_SCOPES } from '../../src/modules/events/feed.service.js';
import { closeContext, createContext, type AppContext } from '../../src/context.js';
import { createApiKey, createOrganization } from '../../src/modules/orgs/orgs.service.js';
import { scratchDatabase } from '../helpers/scratch-database.js';
import { freePort, spawnCrm, waitUntilServing, type CrmProcess } from '../helpers/server-process.js';
import { startWriteLoad, type Acked } from '../helpers/write-load.js';
import { Receiver, eventually } from '../helpers/receiver.js';

/**
 * A real `crm serve` process (API and in-process webhook dispatcher) under a write load, killed with
 * SIGKILL (no shutdown code runs) several times and restarted. Afterwards every acknowledged write is there,
 * every change has exactly its events, no event describes a change that did not happen, and every event
 * reached the subscriber (at least once: deliveries cut off by a kill are sent again).
 */
const KILLS = 5;
const CLIENTS = 6;

describe('crash safety: SIGKILL under write load', () => {
  let db: Awaited<ReturnType<typeof scratchDatabase>>;
  let env: Record<string, string>;
  let baseUrl: string;
  let ctx: AppContext;
  let orgId: string;
  let acked: Acked;
  let server: CrmProcess | undefined;
  let receiver: Receiver;
  const killedAfter: number[] = [];

  /** Event ids the subscriber has received (deduplicated) and how many deliveries it got in all. */
  const delivered = () => {
    const bodies = receiver.requests('/crash').map((r) => JSON.parse(r.body) as { id: string });
    return { ids: new Set(bodies.map((b) => b.id)), total: bodies.length };
  };
  const storedEventIds = async () =>
    (await ctx.database.db.selectFrom('events').select('id').where('organization_id', '=', orgId).execute()).map((r) => r.id);

  const start = async () => {
    const proc = spawnCrm(['serve'], env);
    await waitUntilServing(baseUrl, proc);
    return proc;
  };

  beforeAll(async () => {
    db = await scratchDatabase();
    receiver = await Receiver.start();
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    env = {
      DATABASE_URL: db.url,
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      PORT: String(port),
      HOST: '127.0.0.1',
      RATE_LIMIT_PER_MINUTE: '1000000000',
      LOG_LEVEL: 'warn',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      // A delivery cut off by a kill is taken over once its lease (timeout + 5 s) expires.
      WEBHOOK_TIMEOUT_MS: '2000',
    };
    ctx = await createContext(loadConfig(env));
    orgId = (await createOrganization(ctx, { name: 'Crash' })).id;
    const key = (await createApiKey(ctx, { organizationId: orgId, scopes: ['leads:write', 'accounts:write', 'deals:write', 'records:write', 'objects:admin', 'webhooks:write', ...FEED_SCOPES] })).key;

    server = await start();
    const hook = await fetch(`${baseUrl}/api/public/v1/webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url('/crash'), events: ['*'] }),
    });
    expect(hook.status).toBe(201);
    const deals: string[] = [];
    for (let i = 0; i < CLIENTS; i++) {
      const res = await fetch(`${baseUrl}/api/public/v1/deals`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: `Deal ${i}`, stage: 'qualification' }) });
      deals.push(((await res.json()) as { data: { deal: { id: string } } }).data.deal.id);
    }
    const object = await fetch(`${baseUrl}/api/public/v1/objects`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ slug: 'crash_items', name: 'Items', fields: [{ key: 'title', label: 'Title', type: 'text' }, { key: 'contact', label: 'Contact', type: 'email' }] }),
    });
    expect(object.status).toBe(201);
    const load = startWriteLoad({ baseUrl, key, clients: CLIENTS, deals, object: 'crash_items' });
    acked = load.acked;
    for (let k = 0; k < KILLS; k++) {
      await new Promise((r) => setTimeout(r, 600 + Math.random() * 900));
      await server.stop('SIGKILL');
      killedAfter.push(acked.leads.length + acked.accounts.length + acked.records.length);
      server = await start();
    }
    await new Promise((r) => setTimeout(r, 500));
    await load.stop();
    // Creates that got no answer are retried with their Idempotency-Key, as a client should after a crash.
    for (const c of acked.unknownCreates) {
      const res = await fetch(`${baseUrl}/api/public/v1${c.path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'idempotency-key': c.key }, body: JSON.stringify(c.body) });
      expect([201, 409], `retry of ${c.key}`).toContain(res.status);
    }
    // Delivery catches up after the last restart (leases of attempts cut off by the last kill expire first).
    // About 30 s on an idle machine; one CI run under full load needed more than 120 s on PostgreSQL.
    await eventually(async () => {
      const missing = (await storedEventIds()).filter((id) => !delivered().ids.has(id));
      if (missing.length > 0) throw new Error(`${missing.length} events not delivered yet`);
    }, 240_000, 250);
    await server.stop('SIGTERM');
    server = undefined;
  }, 420_000);

  afterAll(async () => {
    await server?.stop('SIGKILL');
    await receiver?.close();
    if (ctx) await closeContext(ctx);
    await db?.drop();
  });

  it(`killed the server ${KILLS} times while writes were in flight`, () => {
    const { ids, total } = delivered();
    console.log(JSON.stringify({ killedAfter, leads: acked.leads.length, accounts: acked.accounts.length, records: acked.records.length, moves: [...acked.deals.values()].reduce((n, d) => n + d.acked.length - 1, 0), requests: acked.requests, failures: acked.failures, unknownCreates: acked.unknownCreates.length, eventsDelivered: ids.size, deliveries: total }));
    expect(killedAfter).toHaveLength(KILLS);
    expect(acked.leads.length + acked.accounts.length + acked.records.length).toBeGreaterThan(killedAfter[0]!);
    // Some requests were cut off mid-flight: the kills really landed during writes.
    expect(acked.failures).toBeGreaterThan(0);
  });

  it('every acknowledged create is stored, and a retried create never made a second one', async () => {
    const leads = await ctx.database.db.selectFrom('leads').select(['id', 'name']).where('organization_id', '=', orgId).execute();
    const accounts = await ctx.database.db.selectFrom('accounts').select(['id', 'name']).where('organization_id', '=', orgId).execute();
    const records = (await ctx.database.db.selectFrom('records').select(['id', 'data']).where('organization_id', '=', orgId).execute()).map((r) => ({ id: r.id, name: String(JSON.parse(r.data).title) }));
    const byId = new Map([...leads, ...accounts, ...records].map((r) => [r.id, r.name]));
    for (const w of [...acked.leads, ...acked.accounts, ...acked.records]) expect(byId.get(w.id), w.name).toBe(w.name);
    const names = [...leads, ...accounts, ...records].map((r) => r.name);
    expect(new Set(names).size).toBe(names.length);
  });

  it('every acknowledged stage move holds (or a later, unacknowledged one replaced it)', async () => {
    const rows = await ctx.database.db.selectFrom('deals').select(['id', 'stage']).where('organization_id', '=', orgId).execute();
    const stages = new Map(rows.map((r) => [r.id, r.stage]));
    for (const [id, state] of acked.deals) {
      const lastAcked = state.acked[state.acked.length - 1]!;
      expect([lastAcked, ...state.unknown], id).toContain(stages.get(id));
    }
    expect([...acked.deals.values()].reduce((n, d) => n + d.acked.length - 1, 0)).toBeGreaterThan(0);
  });

  it('every committed change has exactly its events, and every event its change', async () => {
    const events = await ctx.database.db.selectFrom('events').select(['type', 'object', 'object_id', 'payload', 'seq']).where('organization_id', '=', orgId).orderBy('seq').execute();
    const created = (object: string) => events.filter((e) => e.type === `${object}.created`).map((e) => e.object_id).sort();
    for (const table of ['leads', 'accounts', 'deals', 'records'] as const) {
      const ids = (await ctx.database.db.selectFrom(table).select('id').where('organization_id', '=', orgId).execute()).map((r) => r.id).sort();
      expect(created(table.slice(0, -1)), table).toEqual(ids);
    }
    // Each deal's stage_changed events chain from its created stage to its stored stage, with no gap.
    const rows = await ctx.database.db.selectFrom('deals').select(['id', 'stage']).where('organization_id', '=', orgId).execute();
    for (const deal of rows) {
      let stage = 'qualification';
      for (const e of events.filter((x) => x.object_id === deal.id && x.type === 'deal.stage_changed')) {
        const { before, after } = JSON.parse(e.payload).data.changes;
        expect(before.stage).toBe(stage);
        stage = after.stage;
      }
      expect(stage, deal.id).toBe(deal.stage);
    }
  });

  it('every event reached the subscriber, and nothing else did (deduplicated by event id)', async () => {
    const stored = await storedEventIds();
    const { ids, total } = delivered();
    expect(stored.length).toBeGreaterThan(CLIENTS * 2);
    expect([...ids].sort()).toEqual([...stored].sort());
    expect(total).toBeGreaterThanOrEqual(stored.length);
  });
});
