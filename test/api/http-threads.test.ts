import { request as httpRequest } from 'node:http';
import { Agent, fetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { Receiver, eventually } from '../helpers/receiver.js';
import { call } from '../helpers/http.js';
import { crm, databaseEnv, killSpawned, serve, testKey, type Spawned } from '../helpers/processes.js';
import { inTransaction } from '../../src/db/transaction.js';
import { createWebhook } from '../../src/modules/webhooks/webhooks.service.js';

/**
 * `crm serve` with HTTP_THREADS=2, as a real process: every thread serves from the one port, one rate-limit
 * budget, writes from every thread, the dispatcher woken by commits of any thread, metrics summed, and a
 * graceful stop of all threads. Which thread answered is told by the request id's per-thread prefix.
 */
/**
 * A `crm serve` start with a second thread took 17 to 28 s at a load of 20 on 2 cores (each thread loads the
 * whole app), the three starts of the last test 84 s: the tests that wait for starts get over three times that.
 */
const STARTS_TIMEOUT = 300_000;

let t: TestApp;
let server: Spawned & { base: string };
let receiver: Receiver;
const METRICS_TOKEN = 'metrics-token-0123456789';
// Many connections at once, so that the kernel hands them to both threads.
const agent = new Agent({ connections: 64, pipelining: 1 });

beforeAll(async () => {
  t = await buildTestApp({ env: { ENCRYPTION_KEY: testKey() } });
  receiver = await Receiver.start();
  server = await serve({ ...databaseEnv(t), HTTP_THREADS: '2', METRICS_TOKEN, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
  await server.waitFor(/serving HTTP from several threads/);
}, STARTS_TIMEOUT);
afterAll(async () => {
  killSpawned();
  await agent.close();
  await receiver.close();
  await t.close();
});

async function request(path: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}, dispatcher = agent) {
  const res = await fetch(`${server.base}${path}`, {
    method: init.method ?? 'GET',
    headers: { ...(init.body ? { 'content-type': 'application/json' } : {}), ...init.headers },
    ...(init.body ? { body: JSON.stringify(init.body) } : {}),
    dispatcher,
  });
  const text = await res.text();
  return { status: res.status, requestId: res.headers.get('x-request-id') ?? '', body: text ? JSON.parse(text) : undefined };
}

/** The thread that answered: request ids are `req_` + a prefix drawn once per thread + random bytes. */
const threadOf = (requestId: string) => requestId.slice(4, 16);

/**
 * One GET on a connection of its own: 'answered' when a complete 200 came back, else the error's code
 * (ECONNREFUSED: refused at connect; ECONNRESET / socket hang up: accepted, then cut).
 */
function onNewConnection(path: string, headers: Record<string, string>): Promise<string> {
  return new Promise((resolve) => {
    const req = httpRequest(`${server.base}${path}`, { headers, agent: false }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve(res.statusCode === 200 && JSON.parse(body).data ? 'answered' : `status ${res.statusCode}`));
      res.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.message === 'socket hang up' ? 'socket hang up' : (err.code ?? err.message)));
    req.end();
  });
}

/** A POST on a connection of its own whose body goes out in two halves: the second when `finish()` is called. */
function slowPost(path: string, headers: Record<string, string>, body: unknown) {
  const bytes = Buffer.from(JSON.stringify(body));
  const req = httpRequest(`${server.base}${path}`, {
    method: 'POST',
    agent: false,
    headers: { ...headers, 'content-type': 'application/json', 'content-length': String(bytes.length) },
  });
  const response = new Promise<number>((resolve, reject) => {
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
  });
  const half = Math.floor(bytes.length / 2);
  const sentHalf = new Promise<void>((resolve) => req.write(bytes.subarray(0, half), () => resolve()));
  return { sentHalf, response, finish: () => req.end(bytes.subarray(half)) };
}

/** Bursts of parallel requests until two threads have answered (a burst of fresh connections spreads). */
async function burstUntilBothThreads(org: Seeded): Promise<void> {
  const seen = new Set<string>();
  for (let i = 0; i < 20 && seen.size < 2; i++) {
    const burst = await Promise.all(Array.from({ length: 64 }, () => request('/api/public/v1/me', { headers: org.auth })));
    for (const r of burst) seen.add(threadOf(r.requestId));
  }
  expect(seen.size).toBe(2);
}

describe('HTTP_THREADS=2', () => {
  it('spends one rate-limit budget across threads, exactly', async () => {
    const warm = await seedOrg(t.ctx, { rateLimitPerMinute: 100_000 });
    await burstUntilBothThreads(warm);
    const limited = await seedOrg(t.ctx, { rateLimitPerMinute: 50 });
    const results = await Promise.all(Array.from({ length: 120 }, () => request('/api/public/v1/me', { headers: limited.auth })));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(50);
    expect(statuses.filter((s) => s === 429)).toHaveLength(70);
    expect(new Set(results.map((r) => threadOf(r.requestId))).size).toBe(2);
  });

  it('commits writes from every thread once per Idempotency-Key, and delivers their events', async () => {
    const org = await seedOrg(t.ctx, { rateLimitPerMinute: 100_000 });
    await inTransaction(t.ctx, (trx) => createWebhook(t.ctx, trx, org.orgId, { url: receiver.url('/threads'), events: ['lead.created'] }));
    // 60 leads, each asked for three times at once under its own key: one lead each, the others replayed.
    const posts = Array.from({ length: 180 }, (_, i) =>
      request('/api/public/v1/leads', { method: 'POST', headers: { ...org.auth, 'idempotency-key': `k-${i % 60}` }, body: { name: `Threaded ${i % 60}` } }),
    );
    const results = await Promise.all(posts);
    for (const r of results) expect([201, 409]).toContain(r.status);
    expect(new Set(results.filter((r) => r.status === 201).map((r) => threadOf(r.requestId))).size).toBe(2);
    const byKey = new Map<string, Set<string>>();
    results.forEach((r, i) => r.status === 201 && byKey.set(`k-${i % 60}`, (byKey.get(`k-${i % 60}`) ?? new Set()).add(r.body.data.lead.id)));
    expect([...byKey.values()].every((ids) => ids.size === 1)).toBe(true);
    const stored = await t.ctx.database.db.selectFrom('leads').select('id').where('organization_id', '=', org.orgId).execute();
    expect(stored).toHaveLength(60);
    const delivered = await receiver.waitFor('/threads', 60, 30_000);
    expect(new Set(delivered.map((d) => JSON.parse(d.body).data.id))).toEqual(new Set(stored.map((s) => s.id)));
  });

  it('takes writers of one new key in turn across threads: one lead without duplicateOf, one upsert that creates', async () => {
    const org = await seedOrg(t.ctx, { rateLimitPerMinute: 100_000 });
    // Each round opens fresh connections, so the kernel may hand them to either thread; rounds go on until three
    // have had both threads race (the keep-alive agent could leave every request of a round on one thread).
    let mixedRounds = 0;
    for (let round = 0; round < 60 && mixedRounds < 3; round++) {
      const fresh = new Agent({ connections: 16, pipelining: 1 });
      const atOnce = (path: string, body: unknown) =>
        Promise.all(Array.from({ length: 8 }, () => request(path, { method: 'POST', headers: org.auth, body }, fresh)));
      const email = `threads-${round}@race.example`;
      const created = await atOnce('/api/public/v1/leads', { name: 'Threaded', email });
      const upserted = await atOnce('/api/public/v1/accounts/batch', { upsertBy: 'externalId', items: [{ name: 'Acme', externalId: `threads-${round}` }] });
      await fresh.close();
      expect(created.map((r) => r.status)).toEqual(Array(8).fill(201));
      expect(created.filter((r) => r.body.data.lead.duplicateOf === null), `round ${round}`).toHaveLength(1);
      expect(upserted.map((r) => r.body.data.results[0].status).sort(), `round ${round}`).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
      const raced = (rs: typeof created) => new Set(rs.map((r) => threadOf(r.requestId))).size === 2;
      if (raced(created) && raced(upserted)) mixedRounds++;
    }
    expect(mixedRounds).toBe(3);
  }, STARTS_TIMEOUT);

  it('GET /metrics counts the requests of every thread', async () => {
    const org = await seedOrg(t.ctx, { rateLimitPerMinute: 100_000 });
    const metric = async () => {
      const res = await fetch(`${server.base}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` }, dispatcher: agent });
      const line = (await res.text()).split('\n').find((l) => l.startsWith('crm_http_requests_total{') && l.includes('route="/api/public/v1/leads"') && l.includes('status="200"'));
      return line ? Number(line.split(' ').pop()) : 0;
    };
    const before = await metric();
    const results = await Promise.all(Array.from({ length: 100 }, () => request('/api/public/v1/leads', { headers: org.auth })));
    expect(new Set(results.map((r) => threadOf(r.requestId))).size).toBe(2);
    expect(await eventually(async () => {
      const now = await metric();
      if (now - before !== 100) throw new Error(`counted ${now - before}`);
      return now - before;
    })).toBe(100);
  });

  it('stops on SIGTERM after answering what every thread had in flight; new connections are answered or refused, not reset', async () => {
    const org = await seedOrg(t.ctx, { rateLimitPerMinute: 100_000 });
    let stop = false;
    const statuses: number[] = [];
    const clients = Array.from({ length: 16 }, async () => {
      while (!stop) {
        try {
          statuses.push((await request('/api/public/v1/me', { headers: org.auth })).status);
        } catch {
          stop = true; // the server has stopped accepting
        }
      }
    });
    // Clients that open a new connection for every request, as a load balancer's health checks and new pool
    // members do, until the process has exited. What each saw after the signal, in order.
    let signalled = false;
    let exited = false;
    const seen = Array.from({ length: 8 }, () => [] as string[]);
    const openers = seen.map(async (outcomes) => {
      while (!exited) {
        const outcome = await onNewConnection('/api/public/v1/me', org.auth);
        if (signalled) outcomes.push(outcome);
        // A refused connect returns at once: pace the retries so they leave the 2 cores to the draining server.
        if (outcome === 'ECONNREFUSED') await new Promise((resolve) => setTimeout(resolve, 5));
      }
    });
    // A POST in flight across the signal (its body sent in two halves) holds the drain open as long as the test needs.
    const slow = slowPost('/api/public/v1/leads', org.auth, { name: 'In flight at SIGTERM' });
    await slow.sentHalf;
    await eventually(() => {
      if (statuses.length < 200) throw new Error('warming up');
    });
    signalled = true;
    server.proc.kill('SIGTERM');
    // Each client goes on opening connections for 20 attempts while the POST keeps the server draining.
    await eventually(() => {
      if (seen.some((outcomes) => outcomes.length < 20)) throw new Error('clients still trying');
    }, 60_000);
    expect(server.proc.exitCode).toBeNull();
    slow.finish();
    expect(await slow.response).toBe(201);
    expect(await server.exited).toEqual({ code: 0, signal: null });
    exited = true;
    stop = true;
    await Promise.all([...clients, ...openers]);
    // Every request that got an answer got a complete, successful one: none was cut off or refused midway.
    expect(statuses.every((s) => s === 200)).toBe(true);
    // While the server still drained, the socket refused new connections (nothing sent, nothing applied), and
    // every connection it had accepted was answered. The one thing no server can avoid: a connection the kernel
    // had queued, and no thread had yet accepted, in the instant the listening socket closed is reset; each
    // client has one connection at a time, so that is at most one per client, before its first refusal.
    for (const outcomes of seen) {
      const refusedFrom = outcomes.indexOf('ECONNREFUSED');
      const cut = outcomes.flatMap((o, i) => (o === 'answered' || o === 'ECONNREFUSED' ? [] : [i]));
      expect(refusedFrom, outcomes.join()).toBeGreaterThanOrEqual(0);
      expect(cut.every((i) => i === refusedFrom - 1), outcomes.join()).toBe(true);
    }
    expect(server.output()).toContain('"msg":"shutting down"');
  }, STARTS_TIMEOUT);
});

describe('HTTP_THREADS=2, stopped while starting', () => {
  it('exits 0 on a SIGTERM that arrives before the threads are up, with deliveries going out meanwhile', async () => {
    const org = await seedOrg(t.ctx, { rateLimitPerMinute: 100_000 });
    await inTransaction(t.ctx, (trx) => createWebhook(t.ctx, trx, org.orgId, { url: receiver.url('/starting'), events: ['lead.created'] }));
    for (let round = 0; round < 3; round++) {
      // Written in this process (the server of the tests above has stopped): the new server finds them waiting.
      for (let i = 0; i < 20; i++) expect((await call(t.app, 'POST', '/leads', { auth: org.auth, body: { name: `Early ${round}-${i}` } })).status).toBe(201);
      const early = crm(['serve'], { ...databaseEnv(t), PORT: '0', HTTP_THREADS: '2', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
      await early.waitFor(/listening at/);
      early.proc.kill('SIGTERM');
      expect(await early.exited).toEqual({ code: 0, signal: null });
    }
  }, STARTS_TIMEOUT);
});
