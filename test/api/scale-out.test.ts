import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { closeContext, createContext, type AppContext } from '../../src/context.js';
import { localDate } from '../../src/lib/dates.js';
import { createApiKey, createOrganization } from '../../src/modules/orgs/orgs.service.js';
import { dialect } from '../helpers/test-app.js';
import { scratchDatabase } from '../helpers/scratch-database.js';
import { freePort, spawnCrm, waitUntilServing, type CrmProcess } from '../helpers/server-process.js';
import { Receiver, eventually } from '../helpers/receiver.js';

/**
 * The scale-out deployment: two `crm serve` (DISPATCHER=off) and two `crm worker` processes on one
 * PostgreSQL database, the rate limit shared through Redis. Every process is real and started as in
 * production; the checks are on what the outside world sees (answers, deliveries) and on the database.
 */
const RECORDS_DUE = 12;
const LEADS = 30;

/** An Etc/GMT zone where it is now between 10:00 and 22:59, so a record due "today" there is due at once (09:00 has passed). */
function zonePastNineAm(now: Date): string {
  for (let offset = -12; offset <= 14; offset++) {
    const hour = (now.getUTCHours() + offset + 24) % 24;
    if (hour >= 10 && hour <= 22) return offset === 0 ? 'Etc/UTC' : `Etc/GMT${offset > 0 ? '-' : '+'}${Math.abs(offset)}`;
  }
  throw new Error('no zone found');
}

describe.runIf(dialect === 'postgres' && process.env.TEST_REDIS_URL)('scale-out: two crm serve + two crm worker, one PostgreSQL, Redis', () => {
  let db: Awaited<ReturnType<typeof scratchDatabase>>;
  let ctx: AppContext;
  let receiver: Receiver;
  let orgId: string;
  let key: string;
  const processes: CrmProcess[] = [];
  const apis: string[] = [];
  const flakySeen = new Set<string>();

  const api = (i: number, method: string, path: string, body?: unknown, auth = key) =>
    fetch(`${apis[i % apis.length]}/api/public/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${auth}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });

  beforeAll(async () => {
    db = await scratchDatabase();
    receiver = await Receiver.start();
    // Fails the first attempt of every delivery, so each one is attempted exactly twice.
    receiver.on('/flaky', (res, _n, req) => {
      const delivery = String(req.headers['x-service-delivery']);
      const first = !flakySeen.has(delivery);
      flakySeen.add(delivery);
      res.writeHead(first ? 500 : 200).end();
    });
    const env = {
      DATABASE_URL: db.url,
      REDIS_URL: process.env.TEST_REDIS_URL!,
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      DISPATCHER: 'off',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_TIMEOUT_MS: '3000',
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
    };
    ctx = await createContext(loadConfig(env));
    const zone = zonePastNineAm(new Date());
    orgId = (await createOrganization(ctx, { name: 'Scale-out', timezone: zone })).id;
    key = (await createApiKey(ctx, { organizationId: orgId, scopes: ['leads:read', 'leads:write', 'records:write', 'objects:admin', 'webhooks:write'], rateLimitPerMinute: 1_000_000 })).key;

    const ports = [await freePort(), await freePort()];
    const servers = ports.map((port) => spawnCrm(['serve'], { ...env, PORT: String(port) }));
    processes.push(...servers);
    apis.push(...ports.map((p) => `http://127.0.0.1:${p}`));
    await Promise.all(servers.map((s, i) => waitUntilServing(apis[i]!, s)));

    // Records due today: their reminders are due before any worker runs, so both workers race for them.
    const object = await api(0, 'POST', '/objects', { slug: 'visits', name: 'Visits', fields: [{ key: 'title', label: 'Title', type: 'text' }, { key: 'due_on', label: 'Due', type: 'date', role: 'due' }] });
    expect(object.status).toBe(201);
    const today = localDate(new Date(), zone);
    for (let i = 0; i < RECORDS_DUE; i++) expect((await api(i, 'POST', '/objects/visits/records', { title: `Visit ${i}`, due_on: today })).status).toBe(201);
    for (const path of ['/ok', '/flaky']) {
      expect((await api(0, 'POST', '/webhooks', { url: receiver.url(path), events: ['lead.created'] })).status).toBe(201);
    }
    const workers = [spawnCrm(['worker'], env), spawnCrm(['worker'], env)];
    processes.push(...workers);
    for (let i = 0; i < LEADS; i++) expect((await api(i, 'POST', '/leads', { name: `Lead ${i}` })).status).toBe(201);
  }, 180_000);

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop('SIGTERM')));
    await receiver?.close();
    if (ctx) await closeContext(ctx);
    await db?.drop();
  });

  it('the rate limit admits exactly 120 requests per minute for a key, across both instances', async () => {
    const limited = (await createApiKey(ctx, { organizationId: orgId, scopes: ['leads:read'] })).key;
    const statuses = await Promise.all(Array.from({ length: 150 }, (_, i) => api(i, 'GET', '/me', undefined, limited).then((r) => r.status)));
    expect(statuses.filter((s) => s === 200)).toHaveLength(120);
    expect(statuses.filter((s) => s === 429)).toHaveLength(30);
  });

  it('two workers deliver each event once per attempt: no attempt is ever sent twice', async () => {
    const okBodies = await eventually(async () => {
      const got = receiver.requests('/ok');
      if (new Set(got.map((r) => JSON.parse(r.body).id)).size < LEADS) throw new Error(`${got.length} of ${LEADS} delivered`);
      return got;
    }, 60_000, 100);
    await eventually(() => {
      if (receiver.requests('/flaky').length < 2 * LEADS) throw new Error(`${receiver.requests('/flaky').length} of ${2 * LEADS} attempts`);
    }, 60_000, 100);
    // Quiet for a moment: a duplicate would arrive now if any.
    await new Promise((r) => setTimeout(r, 2_000));
    const okIds = receiver.requests('/ok').map((r) => JSON.parse(r.body).id);
    expect(okIds).toHaveLength(LEADS);
    expect(new Set(okIds).size).toBe(LEADS);
    expect(okBodies).toHaveLength(LEADS);
    const flaky = receiver.requests('/flaky').map((r) => String(r.headers['x-service-delivery']));
    expect(flaky).toHaveLength(2 * LEADS);
    const perDelivery = new Map<string, number>();
    for (const d of flaky) perDelivery.set(d, (perDelivery.get(d) ?? 0) + 1);
    expect([...perDelivery.values()].every((n) => n === 2)).toBe(true);
    const attempts = await ctx.database.db.selectFrom('webhook_attempts').select(['delivery_id', 'attempt']).execute();
    const recorded = attempts.filter((a) => perDelivery.has(a.delivery_id));
    expect(recorded).toHaveLength(2 * LEADS);
    expect(new Set(recorded.map((a) => `${a.delivery_id}:${a.attempt}`)).size).toBe(2 * LEADS);
  }, 120_000);

  it('two workers fire each due reminder exactly once', async () => {
    const due = await eventually(async () => {
      const rows = await ctx.database.db.selectFrom('events').select('object_id').where('organization_id', '=', orgId).where('type', '=', 'record.due').execute();
      if (rows.length < RECORDS_DUE) throw new Error(`${rows.length} of ${RECORDS_DUE} reminders fired`);
      return rows;
    }, 60_000, 200);
    expect(due).toHaveLength(RECORDS_DUE);
    expect(new Set(due.map((r) => r.object_id)).size).toBe(RECORDS_DUE);
  }, 90_000);
});
