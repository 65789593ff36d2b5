// Webhook delivery benchmark: `node --import tsx bench/webhooks.ts` (SQLite in a temp folder; set
// BENCH_DATABASE_URL=postgres://… to run on PostgreSQL, in a throw-away schema).
//
//  1. commit-to-delivery latency (p50/p99) at a steady 500 events/s to one fast endpoint: leads are created
//     through the same transaction and commit signal as POST /leads (inTransaction + createLead), one every
//     2 ms on a fixed schedule (never a burst), and each is timed from its commit to its arrival at the receiver;
//  2. the same while a second endpoint of the same organization times out on every call;
//  3. deliveries/s to a fast endpoint while the dispatcher works through a backlog of committed outbox rows,
//     alone and next to the timing-out endpoint. The rate is counted in a window that starts once the
//     timing-out endpoint's first attempts have run into their timeout (so its failures, result writes and
//     retries happen inside the window), the same window in both runs; the two runs alternate A B B A
//     (BENCH_ROUNDS, 2 by default) and the drop is taken between their means.
// The receiver is a node:http server in a child process (like a real remote service) that answers 200 at once,
// except on /dead where it never answers, so every attempt there runs into the 10 s timeout. The CPU time of
// this process per delivery is reported too: on a shared machine it says more about capacity than wall-clock
// rates do. BENCH_SCENARIOS=latency,latency-timeout,drain,drain-timeout picks scenarios (all by default).

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { spawn } from 'node:child_process';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { closeContext, createContext, type AppContext } from '../src/context.js';
import { inTransaction } from '../src/db/transaction.js';
import { newId } from '../src/lib/ids.js';
import { buildEvent } from '../src/modules/events/events.js';
import { recordEvents } from '../src/modules/events/outbox.store.js';
import { createLead } from '../src/modules/leads/leads.service.js';
import { createApiKey, createOrganization } from '../src/modules/orgs/orgs.service.js';
import type { Actor } from '../src/modules/orgs/principal.js';
import { WebhookDispatcher } from '../src/modules/webhooks/dispatcher.js';
import { createWebhook } from '../src/modules/webhooks/webhooks.service.js';

const RECEIVER = `
const http = require('node:http');
let batch = [];
setInterval(() => { if (batch.length) { process.send(batch); batch = []; } }, 10);
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    if (req.url === '/dead') return;
    const at = performance.timeOrigin + performance.now();
    res.end('ok');
    batch.push([JSON.parse(Buffer.concat(chunks).toString()).data.id, at]);
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('disconnect', () => process.exit(0));
`;

/** Wall-clock milliseconds with sub-millisecond resolution, comparable between this process and the receiver. */
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const load = () => loadavg().map((l) => +l.toFixed(2));

interface Receiver {
  url(path: string): string;
  /** First receipt time per object id (lead id), on the healthy path. */
  receipts: Map<string, number>;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const child = spawn(process.execPath, ['-e', RECEIVER], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const receipts = new Map<string, number>();
  const port = await new Promise<number>((resolve) =>
    child.on('message', (m: { port?: number } | [string, number][]) => {
      if (!Array.isArray(m)) return resolve(m.port!);
      for (const [id, at] of m) if (!receipts.has(id)) receipts.set(id, at);
    }),
  );
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    receipts,
    close: async () => {
      if (child.exitCode === null) child.kill();
    },
  };
}

async function openContext(): Promise<{ ctx: AppContext; cleanup: () => Promise<void> }> {
  const base = { ENCRYPTION_KEY: randomBytes(32).toString('base64'), WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', LOG_LEVEL: 'silent' };
  const pgUrl = process.env.BENCH_DATABASE_URL;
  if (pgUrl) {
    const schema = `bench_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: pgUrl });
    await admin.connect();
    await admin.query(`create schema ${schema}`);
    const url = new URL(pgUrl);
    url.searchParams.set('options', `-c search_path=${schema},public`);
    const ctx = await createContext(loadConfig({ ...base, DATABASE_URL: url.toString() }));
    return { ctx, cleanup: async () => { await closeContext(ctx); await admin.query(`drop schema ${schema} cascade`); await admin.end(); } };
  }
  const dir = mkdtempSync(join(tmpdir(), 'crm-bench-'));
  const ctx = await createContext(loadConfig({ ...base, DATABASE_URL: join(dir, 'crm.db') }));
  return { ctx, cleanup: async () => { await closeContext(ctx); rmSync(dir, { recursive: true, force: true }); } };
}

async function organization(ctx: AppContext, receiver: Receiver, withDead: boolean) {
  const org = await createOrganization(ctx, { name: 'Bench' });
  const key = await createApiKey(ctx, { organizationId: org.id, scopes: ['leads:write'] });
  const actor: Actor = { type: 'API_KEY', id: key.id, channel: 'API' };
  await inTransaction(ctx, (trx) => createWebhook(ctx, trx, org.id, { url: receiver.url('/fast'), events: ['lead.created'] }));
  if (withDead) await inTransaction(ctx, (trx) => createWebhook(ctx, trx, org.id, { url: receiver.url('/dead'), events: ['*'] }));
  return { organizationId: org.id, actor };
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const cpuMicros = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return used.user + used.system;
};

/** Leads created through the real write path at `rate`/s; latency from each commit to the receiver's receipt. */
async function latency(ctx: AppContext, receiver: Receiver, withDead: boolean, rate: number, seconds: number) {
  const caller = await organization(ctx, receiver, withDead);
  const dispatcher = new WebhookDispatcher(ctx).start();
  const committed = new Map<string, number>();
  const total = rate * seconds;
  const start = now();
  const writes: Promise<void>[] = [];
  const cpu = process.cpuUsage();
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    if (due > now()) await sleep(due - now());
    writes.push(inTransaction(ctx, (trx) => createLead(ctx, trx, caller, { name: `Bench ${i}` })).then((lead) => void committed.set(lead.id, now())));
  }
  await Promise.all(writes);
  const achieved = total / ((now() - start) / 1000);
  const deadline = now() + 30_000;
  const missing = () => [...committed.keys()].filter((id) => !receiver.receipts.has(id)).length;
  while (now() < deadline && missing() > 0) await sleep(50);
  const cpuMicrosPerEvent = Math.round(cpuMicros(cpu) / total);
  await dispatcher.stop();
  // The first second warms up JIT and connections; it is not measured. An event never delivered counts as
  // the longest latency there is (it sorts last), so it can't flatter p99.
  const measuredPairs = [...committed].filter((_, i) => i >= rate);
  const measured = measuredPairs.map(([id, at]) => (receiver.receipts.get(id) ?? Number.POSITIVE_INFINITY) - at).sort((a, b) => a - b);
  const round = (ms: number) => (Number.isFinite(ms) ? +ms.toFixed(1) : 'never');
  // CPU of this process per event: creating the lead through the service AND delivering it.
  return {
    events: total,
    achievedPerSecond: Math.round(achieved),
    undelivered: missing(),
    cpuMicrosPerEvent,
    p50: round(percentile(measured, 50)),
    p99: round(percentile(measured, 99)),
    max: round(measured.at(-1)!),
  };
}

/** Outbox rows for `count` lead.created events, committed a few hundred per transaction. */
async function commitBacklog(ctx: AppContext, caller: { organizationId: string; actor: Actor }, count: number): Promise<void> {
  for (let i = 0; i < count; i += 500) {
    const events = Array.from({ length: Math.min(500, count - i) }, (_, j) =>
      buildEvent({
        type: 'lead.created',
        organizationId: caller.organizationId,
        object: 'lead',
        objectId: newId(),
        description: 'Lead created',
        changes: { before: {}, after: { name: `Backlog ${i + j}` } },
        actor: caller.actor,
        now: new Date(),
      }),
    );
    await inTransaction(ctx, (trx) => recordEvents(trx, events));
  }
}

/**
 * A backlog of `count` events committed with no dispatcher running, then worked through: deliveries/s to /fast
 * counted between `from` and `to` seconds after the dispatcher starts (or until the backlog runs out).
 */
async function drain(ctx: AppContext, receiver: Receiver, withDead: boolean, count: number, from: number, to: number) {
  const caller = await organization(ctx, receiver, withDead);
  await commitBacklog(ctx, caller, count);
  const before = receiver.receipts.size;
  const dispatcher = new WebhookDispatcher(ctx);
  const start = now();
  dispatcher.start();
  await sleep(from * 1000 - (now() - start));
  const atFrom = receiver.receipts.size;
  const cpu = process.cpuUsage();
  const windowStart = now();
  // Ids are fresh, so the receipts map reaching this size means the whole backlog arrived.
  while (now() < start + to * 1000 && receiver.receipts.size < before + count) await sleep(5);
  const seconds = (now() - windowStart) / 1000;
  const delivered = receiver.receipts.size - atFrom;
  const cpuMicrosPerDelivery = Math.round(cpuMicros(cpu) / Math.max(1, delivered));
  const drainedEarly = receiver.receipts.size >= before + count;
  // A timing-out endpoint holds its attempts for the full timeout; stopping waits for them.
  await dispatcher.stop();
  if (atFrom - before >= count || seconds < 1) throw new Error(`the backlog of ${count} ran out before the window: raise BENCH_BACKLOG`);
  const opened = (windowStart - start) / 1000;
  return { backlog: count, window: `${opened.toFixed(1)}–${(opened + seconds).toFixed(1)} s`, drainedEarly, deliveries: delivered, perSecond: Math.round(delivered / seconds), cpuMicrosPerDelivery };
}

/**
 * Each scenario on a fresh database, so one scenario's backlog never weighs on the next, and with the receipts
 * of the earlier ones forgotten: hundreds of thousands of them slowed this process (GC) for the later scenarios.
 */
async function scenario<T>(receiver: Receiver, run: (ctx: AppContext) => Promise<T>): Promise<T & { load: number[] }> {
  receiver.receipts.clear();
  const { ctx, cleanup } = await openContext();
  try {
    const result = await run(ctx);
    return { ...result, load: load() };
  } finally {
    await cleanup();
  }
}

export interface WebhookBenchOptions {
  rate?: number;
  seconds?: number;
  backlog?: number;
  /** Drain window, in seconds after the dispatcher starts: after the first timeouts (10 s) by default. */
  windowFrom?: number;
  windowTo?: number;
  /** Drains alone and next to the timing-out endpoint, alternated (A B B A …) this many times, so load drifting on a shared machine weighs on both alike. */
  rounds?: number;
  scenarios?: string[];
}

type DrainResult = Awaited<ReturnType<typeof drain>> & { load: number[] };

/** The rounds of one drain scenario, and their mean rate and CPU per delivery. */
function summarize(runs: DrainResult[]) {
  const mean = (pick: (r: DrainResult) => number) => Math.round(runs.reduce((sum, r) => sum + pick(r), 0) / runs.length);
  return { perSecond: mean((r) => r.perSecond), cpuMicrosPerDelivery: mean((r) => r.cpuMicrosPerDelivery), runs };
}

export async function runWebhookBench(opts: WebhookBenchOptions = {}): Promise<Record<string, unknown>> {
  const rate = opts.rate ?? 500;
  const seconds = opts.seconds ?? 20;
  const backlog = opts.backlog ?? 250_000;
  const windowFrom = opts.windowFrom ?? 12;
  const windowTo = opts.windowTo ?? 20;
  const rounds = opts.rounds ?? 2;
  const want = (name: string) => !opts.scenarios || opts.scenarios.includes(name);
  const receiver = await startReceiver();
  const results: Record<string, unknown> = { database: process.env.BENCH_DATABASE_URL ? 'PostgreSQL' : 'SQLite', loadAtStart: load() };
  try {
    if (want('latency')) results.latencyFast = await scenario(receiver, (ctx) => latency(ctx, receiver, false, rate, seconds));
    if (want('latency-timeout')) results.latencyWithTimingOut = await scenario(receiver, (ctx) => latency(ctx, receiver, true, rate, seconds));
    const alone: DrainResult[] = [];
    const beside: DrainResult[] = [];
    const drainAlone = async () => want('drain') && alone.push(await scenario(receiver, (ctx) => drain(ctx, receiver, false, backlog, windowFrom, windowTo)));
    const drainBeside = async () => want('drain-timeout') && beside.push(await scenario(receiver, (ctx) => drain(ctx, receiver, true, backlog, windowFrom, windowTo)));
    // A B B A …: neither goes first or last every time.
    for (let round = 0; round < rounds; round++) {
      for (const run of round % 2 === 0 ? [drainAlone, drainBeside] : [drainBeside, drainAlone]) await run();
    }
    if (alone.length) results.drainFast = summarize(alone);
    if (beside.length) results.drainWithTimingOut = summarize(beside);
    if (alone.length && beside.length) {
      const [a, b] = [summarize(alone).perSecond, summarize(beside).perSecond];
      results.healthyRateDrop = `${(((a - b) / a) * 100).toFixed(1)} %`;
    }
    return results;
  } finally {
    await receiver.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const env = (name: string) => (process.env[name] ? Number(process.env[name]) : undefined);
  runWebhookBench({
    rate: env('BENCH_RATE'),
    seconds: env('BENCH_SECONDS'),
    backlog: env('BENCH_BACKLOG'),
    windowFrom: env('BENCH_WINDOW_FROM'),
    windowTo: env('BENCH_WINDOW_TO'),
    rounds: env('BENCH_ROUNDS'),
    scenarios: process.env.BENCH_SCENARIOS?.split(','),
  }).then(
    (r) => {
      console.log(JSON.stringify(r, null, 2));
      process.exit(0);
    },
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
