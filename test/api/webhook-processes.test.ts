import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, dialect, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { Receiver, eventually, verifyBoth } from '../helpers/receiver.js';
import { crm, databaseEnv, killSpawned, serve, testKey } from '../helpers/processes.js';
import { inTransaction } from '../../src/db/transaction.js';
import { createWebhook } from '../../src/modules/webhooks/webhooks.service.js';
import { listenForCommits, publishCommits } from '../../src/modules/webhooks/pg-wakeup.js';
import { call } from '../helpers/http.js';

let t: TestApp;
let receiver: Receiver;
let env: Record<string, string>;

beforeAll(async () => {
  t = await buildTestApp({ env: { ENCRYPTION_KEY: testKey(), WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  receiver = await Receiver.start();
  // 5 s: long enough that a receiver slowed by a busy machine is not timed out (a retry would be a legitimate
  // second delivery), short enough that leases cut by a SIGKILL end within 10 s.
  env = { ...databaseEnv(t), WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_TIMEOUT_MS: '5000' };
});
afterAll(async () => {
  killSpawned();
  await receiver.close();
  await t.close();
});

async function endpointFor(org: Seeded, path: string): Promise<string> {
  const created = await inTransaction(t.ctx, (trx) => createWebhook(t.ctx, trx, org.orgId, { url: receiver.url(path), events: ['lead.created'] }));
  return created.secret!;
}

async function postLead(base: string, org: Seeded, name: string): Promise<number> {
  const res = await fetch(`${base}/api/public/v1/leads`, {
    method: 'POST',
    headers: { ...org.auth, 'content-type': 'application/json' },
    body: JSON.stringify({ name }),
  });
  await res.arrayBuffer();
  return res.status;
}

const eventIdsOf = async (org: Seeded) =>
  (await t.ctx.database.db.selectFrom('events').select('id').where('organization_id', '=', org.orgId).where('type', '=', 'lead.created').execute()).map((r) => r.id);

describe('a server killed with SIGKILL', () => {
  it('loses nothing: committed events are delivered after a restart, once each', async () => {
    const org = await seedOrg(t.ctx, { rateLimitPerMinute: 100_000 });
    const secret = await endpointFor(org, '/crash');

    // 1. Commit, then die before any delivery (no dispatcher in this process), then restart.
    const a = await serve({ ...env, DISPATCHER: 'off' });
    for (let i = 0; i < 20; i++) expect(await postLead(a.base, org, `Before crash ${i}`)).toBe(201);
    a.proc.kill('SIGKILL');
    expect((await a.exited).signal).toBe('SIGKILL');
    expect(receiver.requests('/crash')).toEqual([]);

    const b = await serve({ ...env, DISPATCHER: 'inline' });
    const first = await receiver.waitFor('/crash', 20, 60_000);
    for (const r of first) verifyBoth(r, secret);
    expect(new Set(first.map((r) => r.headers['webhook-id'])).size).toBe(20);

    // 2. Kill it again in the middle of a stream of writes and deliveries.
    let stop = false;
    const writers = Array.from({ length: 8 }, async (_, w) => {
      for (let i = 0; !stop; i++) await postLead(b.base, org, `Load ${w}-${i}`).catch(() => (stop = true));
    });
    await receiver.waitFor('/crash', 80, 60_000);
    b.proc.kill('SIGKILL');
    stop = true;
    await Promise.all(writers);
    await b.exited;
    // What reached the receiver before the restart: an attempt sent by b may be sent again by c (b died before
    // its result was written, and the lease ran out). b's last requests may still be unread when its exit is
    // seen: the receiver has read everything b sent once b's connections are closed.
    await eventually(() => {
      if (receiver.openConnections() > 0) throw new Error(`${receiver.openConnections()} connections of the killed server still open`);
    }, 30_000, 20);
    const receivedBeforeRestart = new Set(receiver.requests('/crash').map((r) => String(r.headers['webhook-id'])));

    const c = await serve({ ...env, DISPATCHER: 'inline' });
    const committed = await eventIdsOf(org);
    expect(committed.length).toBeGreaterThan(80);
    // Attempts in flight at the kill come back when their lease (timeout + 5 s = 10 s) ends.
    const received = await eventually(() => {
      const ids = new Set(receiver.requests('/crash').map((r) => String(r.headers['webhook-id'])));
      const missing = committed.filter((id) => !ids.has(id));
      if (missing.length) throw new Error(`${missing.length} of ${committed.length} events not delivered`);
      return receiver.requests('/crash');
    }, 60_000, 100);
    // At-least-once: a repeat carries the same event and delivery ids, and each one is explained: either the
    // event reached the receiver before the restart (b was killed before writing its result), or an attempt of
    // it is logged as failed (it timed out on a loaded machine and was retried). Any other repeat is a double send.
    const byEvent = new Map<string, Set<string>>();
    const timesReceived = new Map<string, number>();
    for (const r of received) {
      const eventId = String(r.headers['webhook-id']);
      byEvent.set(eventId, (byEvent.get(eventId) ?? new Set()).add(String(r.headers['x-service-delivery'])));
      timesReceived.set(eventId, (timesReceived.get(eventId) ?? 0) + 1);
    }
    expect([...byEvent.values()].every((deliveryIds) => deliveryIds.size === 1)).toBe(true);
    const failedAttempts = await t.ctx.database.db
      .selectFrom('webhook_attempts as a')
      .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
      .select('d.event_id')
      .where('d.organization_id', '=', org.orgId)
      .where('a.succeeded', '=', 0)
      .execute();
    const retried = new Set(failedAttempts.map((a) => a.event_id));
    const unexplained = [...timesReceived].filter(([id, n]) => n > 1 && !receivedBeforeRestart.has(id) && !retried.has(id));
    expect(unexplained).toEqual([]);
    // The 20 events of the first crash were delivered exactly once.
    const firstIds = new Set(first.map((r) => String(r.headers['webhook-id'])));
    expect(received.filter((r) => firstIds.has(String(r.headers['webhook-id'])))).toHaveLength(20);

    c.proc.kill('SIGTERM');
    expect((await c.exited).code).toBe(0);
  }, 300_000);
});

describe('two `crm worker` processes on one database', () => {
  it('send every attempt exactly once', async () => {
    const org = await seedOrg(t.ctx, { rateLimitPerMinute: 100_000 });
    await endpointFor(org, '/w1');
    await endpointFor(org, '/w2');
    // The default 10 s timeout: on SQLite this test process (the receiver) also writes, and can stall for a
    // moment waiting for the workers' write lock; a short timeout would turn that stall into a retry.
    const workerEnv = { ...env, WEBHOOK_TIMEOUT_MS: '10000' };
    const workers = [crm(['worker'], workerEnv), crm(['worker'], workerEnv)];
    await Promise.all(workers.map((w) => w.waitFor(/webhook worker started/)));
    // On PostgreSQL the API side NOTIFYs the workers after each commit, as `crm serve` does with DISPATCHER=off;
    // a third listener here checks that the notifications flow.
    let notified = 0;
    const unpublish = dialect === 'postgres' ? publishCommits(t.ctx, console) : () => undefined;
    const listener = dialect === 'postgres' ? await listenForCommits(env.DATABASE_URL!, () => notified++, console) : undefined;
    try {
      for (let i = 0; i < 100; i++) expect((await call(t.app, 'POST', '/leads', { auth: org.auth, body: { name: `W${i}` } })).status).toBe(201);
      await receiver.waitFor('/w1', 100, 30_000);
      await receiver.waitFor('/w2', 100, 30_000);
      if (listener) expect(notified).toBeGreaterThan(1);
    } finally {
      unpublish();
      await listener?.close();
    }
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    for (const path of ['/w1', '/w2']) {
      const got = receiver.requests(path);
      expect(got).toHaveLength(100);
      expect(new Set(got.map((r) => r.headers['x-service-delivery'])).size).toBe(100);
    }
    const attempts = await t.ctx.database.db
      .selectFrom('webhook_attempts as a')
      .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
      .select(['a.attempt', 'd.status', 'a.error'])
      .where('d.organization_id', '=', org.orgId)
      .execute();
    expect(attempts).toHaveLength(200);
    expect(attempts.filter((a) => Number(a.attempt) !== 1 || a.status !== 'SUCCEEDED')).toEqual([]);
    for (const w of workers) w.proc.kill('SIGTERM');
    for (const w of workers) expect((await w.exited).code).toBe(0);
  }, 300_000);
});
