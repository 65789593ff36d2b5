// Webhook delivery benchmark: `node --import tsx bench/webhooks.ts` (SQLite in a temp folder; set
// BENCH_DATABASE_URL=postgres://… to run on PostgreSQL, in a throw-away schema).
//
//  1. commit-to-delivery latency (p50/p99) at a steady 500 events/s to one fast endpoint;
//  2. the same while a second endpoint of the same organization times out on every call;
//  3. deliveries/s draining a backlog to a fast endpoint, alone and next to the timing-out one.
// The receiver runs in a child process (like a real remote service) and answers 200 at once, except on /dead
// where it never answers, so every attempt there runs into the 10 s timeout. The CPU time of this process per
// delivery is reported too: on a shared machine it says more about capacity than wall-clock rates do.

import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { spawn } from 'node:child_process';
import pg from 'pg';
import { loadConfig } from '../src/config.js';
import { closeContext, createContext, type AppContext } from '../src/context.js';
import { inTransaction } from '../src/db/transaction.js';
import { buildEvent } from '../src/modules/events/events.js';
import { recordEvent } from '../src/modules/events/outbox.store.js';
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

const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Receiver {
  url(path: string): string;
  /** Receipt time per object id (lead id), of the healthy path. */
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

/** Leads created through the real write path at `rate`/s; latency from commit to the receiver's receipt. */
async function latency(ctx: AppContext, receiver: Receiver, withDead: boolean, rate: number, seconds: number) {
  const caller = await organization(ctx, receiver, withDead);
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
  const missing = () => [...committed.keys()].some((id) => !receiver.receipts.has(id));
  while (now() < deadline && missing()) await sleep(50);
  const used = process.cpuUsage(cpu);
  // The first second warms up JIT and connections; it is not measured.
  const measuredPairs = [...committed].filter((_, i) => i >= rate);
  const measured = measuredPairs.map(([id, at]) => receiver.receipts.get(id)! - at).sort((a, b) => a - b);
  const receipts = measuredPairs.map(([id]) => receiver.receipts.get(id)!);
  const deliveredPerSecond = Math.round(measuredPairs.length / ((Math.max(...receipts) - measuredPairs[0]![1]) / 1000));
  // CPU of this process per event: creating the lead through the service AND delivering it.
  const cpuMicrosPerEvent = Math.round((used.user + used.system) / total);
  return { events: total, achievedPerSecond: Math.round(achieved), deliveredPerSecond, cpuMicrosPerEvent, p50: +percentile(measured, 50).toFixed(1), p99: +percentile(measured, 99).toFixed(1), max: +measured.at(-1)!.toFixed(1) };
}

/** `count` lead.created events committed while the dispatcher is stopped, then drained: deliveries/s to /fast. */
async function throughput(ctx: AppContext, receiver: Receiver, withDead: boolean, count: number, dispatcherOptions = {}) {
  const caller = await organization(ctx, receiver, withDead);
  const ids: string[] = [];
  for (let i = 0; i < count; i += 500) {
    await ctx.database.db.transaction().execute(async (trx) => {
      for (let j = i; j < Math.min(count, i + 500); j++) {
        const id = randomBytes(12).toString('hex');
        ids.push(id);
        const changes = { before: {}, after: { name: `Backlog ${j}` } };
        await recordEvent(trx, buildEvent({ type: 'lead.created', organizationId: caller.organizationId, object: 'lead', objectId: id, description: 'Lead created', changes, actor: caller.actor, now: new Date() }));
      }
    });
  }
  const dispatcher = new WebhookDispatcher(ctx, dispatcherOptions);
  const cpu = process.cpuUsage();
  const start = now();
  dispatcher.start();
  // Ids are fresh, so the receipts map reaching this size means every one arrived (cheap to check).
  const target = receiver.receipts.size + ids.length;
  while (receiver.receipts.size < target) await sleep(5);
  const seconds = (now() - start) / 1000;
  const used = process.cpuUsage(cpu);
  const cpuMicrosPerDelivery = Math.round((used.user + used.system) / count);
  return { dispatcher, deliveries: count, seconds: +seconds.toFixed(2), perSecond: Math.round(count / seconds), cpuMicrosPerDelivery };
}

/** Each scenario on a fresh database, so one scenario's backlog never weighs on the next. */
async function scenario<T>(run: (ctx: AppContext) => Promise<T>): Promise<T> {
  const { ctx, cleanup } = await openContext();
  try {
    return await run(ctx);
  } finally {
    await cleanup();
  }
}

export async function runWebhookBench(opts: { rate?: number; seconds?: number; backlog?: number } = {}): Promise<Record<string, unknown>> {
  const rate = opts.rate ?? 500;
  const seconds = opts.seconds ?? 11;
  const backlog = opts.backlog ?? 20_000;
  const receiver = await startReceiver();
  try {
    const atRate = (withDead: boolean) =>
      scenario(async (ctx) => {
        const dispatcher = new WebhookDispatcher(ctx).start();
        try {
          return await latency(ctx, receiver, withDead, rate, seconds);
        } finally {
          await dispatcher.stop();
        }
      });
    const drain = (withDead: boolean) =>
      scenario(async (ctx) => {
        const { dispatcher, ...result } = await throughput(ctx, receiver, withDead, backlog);
        // A timing-out endpoint holds its attempts for the full timeout; stopping waits for them.
        await dispatcher.stop();
        return result;
      });
    const latencyFast = await atRate(false);
    const latencyWithTimingOut = await atRate(true);
    const throughputFast = await drain(false);
    const throughputWithTimingOut = await drain(true);
    return {
      database: process.env.BENCH_DATABASE_URL ? 'PostgreSQL' : 'SQLite',
      latencyFast,
      latencyWithTimingOut,
      throughputFast,
      throughputWithTimingOut,
      healthyRateDrop: `${(((throughputFast.perSecond - throughputWithTimingOut.perSecond) / throughputFast.perSecond) * 100).toFixed(1)} %`,
    };
  } finally {
    await receiver.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const env = (name: string) => (process.env[name] ? Number(process.env[name]) : undefined);
  runWebhookBench({ rate: env('BENCH_RATE'), seconds: env('BENCH_SECONDS'), backlog: env('BENCH_BACKLOG') }).then(
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
