/**
 * Batch benchmark (contract §8): leads per second written by `POST /leads/batch` of 100 items (through the app,
 * app.inject: auth, rate limit, validation, the transaction and the response), one client at a time:
 * - new leads (name, e-mail, phone, source, externalId), next to the same leads sent one by one to POST /leads;
 * - upsert by e-mail where every item's address already exists (each item an update of the oldest holder);
 * - upsert by e-mail where half the items are new.
 *
 *   npm run bench -- --only batch [--seconds S] [--postgres URL]
 *
 * Then the same new leads sent to a `crm serve` over HTTP from eight connections (runBatchServerBench).
 * Next to it, `--only import` gives the rows/s of `crm import leads` on the same machine: the bar compares the two.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import type { Dialect } from '../src/config.js';
import { buildApp } from '../src/app.js';
import { createApiKey, createOrganization } from '../src/modules/orgs/orgs.service.js';
import { cli, cpuSecondsOf, fmt, load, openBench, stop } from './lib.js';
import { PORT, startServer } from './throughput.js';

const BATCH = 100;
const SOURCES = ['WEBSITE', 'REFERRAL', 'EVENT', 'PARTNER'];

let serial = 0;
const newLead = () => {
  serial += 1;
  return { name: `Bench Lead ${serial}`, email: `lead${serial}@bench.example`, phoneNumber: `+1415${5_000_000 + serial}`, source: SOURCES[serial % 4], externalId: `ext-${serial}` };
};

export async function runBatchBench(opts: { dialect: Dialect; pgUrl?: string; seconds: number }): Promise<void> {
  // Each run has a database of its own: the leads it upserts are the ones it created (the PostgreSQL run follows
  // SQLite's in one process, and picked addresses that only SQLite's database held).
  serial = 0;
  const { ctx, drop } = await openBench('batch', opts.dialect, opts.pgUrl);
  const app = await buildApp(ctx, { logger: false });
  try {
    const org = await createOrganization(ctx, { name: 'Bench', timezone: 'UTC' });
    const key = await createApiKey(ctx, { organizationId: org.id, scopes: ['leads:write', 'leads:read'], name: 'bench', rateLimitPerMinute: 1_000_000_000 });
    await app.ready();
    const headers = { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' };
    const send = async (url: string, body: unknown, expected: number) => {
      const res = await app.inject({ method: 'POST', url: `/api/public/v1${url}`, headers, payload: JSON.stringify(body) });
      if (res.statusCode !== expected) throw new Error(`POST ${url} answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
      return JSON.parse(res.body).data;
    };
    /**
     * Leads per second over `seconds`, `clients` senders each sending what `next` returns, one after the other;
     * and this process's CPU time per lead (app and SQLite: on a loaded machine the steadier figure).
     */
    const rate = async (next: () => Promise<number>, clients = 1) => {
      for (let i = 0; i < 5; i++) await next();
      let leads = 0;
      const start = performance.now();
      const cpu = process.cpuUsage();
      await Promise.all(Array.from({ length: clients }, async () => {
        // Not `leads += await next()`: that reads `leads` before the await, so concurrent clients overwrite
        // each other's counts and four clients would report about a quarter of what they wrote.
        while (performance.now() - start < opts.seconds * 1000) {
          const written = await next();
          leads += written;
        }
      }));
      const { user, system } = process.cpuUsage(cpu);
      return { perSecond: (leads / (performance.now() - start)) * 1000, cpuMicros: (user + system) / leads };
    };
    const checkAll = (results: { status: number }[], status: number) => {
      const odd = results.find((r) => r.status !== status);
      if (odd) throw new Error(`an item answered ${JSON.stringify(odd)}`);
      return results.length;
    };
    const createBatch = async () => checkAll((await send('/leads/batch', { items: Array.from({ length: BATCH }, newLead) }, 200)).results, 201);
    const created = await rate(createBatch);
    const createdFour = await rate(createBatch, 4);
    const single = await rate(async () => {
      for (let i = 0; i < BATCH; i++) await send('/leads', newLead(), 201);
      return BATCH;
    });
    const existing = serial;
    const pick = () => `lead${1 + Math.floor(Math.random() * existing)}@bench.example`;
    const hits = await rate(async () => {
      const emails = new Set<string>();
      while (emails.size < BATCH) emails.add(pick());
      const items = [...emails].map((email, i) => ({ name: `Updated ${i}`, email, title: `Title ${serial++}` }));
      return checkAll((await send('/leads/batch', { upsertBy: 'email', items }, 200)).results, 200);
    });
    const mixed = await rate(async () => {
      const emails = new Set<string>();
      while (emails.size < BATCH / 2) emails.add(pick());
      const items = [...[...emails].map((email) => ({ name: 'Updated', email, title: `Title ${serial++}` })), ...Array.from({ length: BATCH / 2 }, newLead)];
      return (await send('/leads/batch', { upsertBy: 'email', items }, 200)).results.length;
    });
    console.log(`\n## POST /leads/batch of ${BATCH} (${opts.dialect}, app.inject, one client, ${opts.seconds} s each)\n`);
    const row = (what: string, r: { perSecond: number; cpuMicros: number }) => console.log(`| ${what} | ${fmt(r.perSecond, 0)} | ${fmt(r.cpuMicros, 0)} |`);
    console.log(`| what | leads/s | CPU µs per lead (this process${opts.dialect === 'postgres' ? ', not the server' : ''}) |\n|---|---|---|`);
    row('new leads, POST /leads/batch', created);
    row('new leads, POST /leads/batch, 4 clients at once', createdFour);
    row('new leads, one POST /leads each', single);
    row('upsert by e-mail, every item an existing lead (200)', hits);
    row('upsert by e-mail, half new, half existing', mixed);
    console.log(`\n(${serial.toLocaleString('en')} leads in the organization at the end)`);
  } finally {
    // The app first: requests still in flight (a failed round's other clients) hold pool connections.
    await app.close();
    await drop();
  }
}

/**
 * The same batches sent to a `crm serve` process over HTTP (SQLite, a fresh file), from `connections` (8)
 * connections at once, with HTTP_THREADS=1 and with the machine's default: the server's capacity, where the
 * rows above are one app's cost per request. The bar is a capacity: one key may send 120 requests a minute
 * (200 leads/s in batches of 100), so 15,000 leads/s is many clients at once, which is what this measures.
 * First new leads (every body new, autocannon from this process), then upserts by e-mail of 100 distinct leads
 * picked at random among those just written, each renamed (every item a hit). leads/s counts the items of the
 * 2xx answers, after WARM_UP_SECONDS of the same load: new leads are checked against the organization's count
 * at the end, hits against the `lead.updated` events (and the count, which hits must not move). CPU is the
 * server process's (every thread: HTTP, the sealing worker, the webhook dispatcher, V8's helpers).
 */
const WARM_UP_SECONDS = 10;

export async function runBatchServerBench(opts: { seconds: number; connections?: number }): Promise<void> {
  const connections = opts.connections ?? 8;
  console.log(`\n## POST /leads/batch of ${BATCH} to \`crm serve\` (SQLite, HTTP, ${connections} connections, ${opts.seconds} s)\n`);
  console.log('| what | HTTP_THREADS | leads/s | server CPU µs per lead | p50 ms | p99 ms |\n|---|---|---|---|---|---|');
  for (const threads of ['1', undefined]) {
    const dir = mkdtempSync(join(tmpdir(), 'crm-bench-batch-serve-'));
    const file = join(dir, 'crm.db');
    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: file, ENCRYPTION_KEY: randomBytes(32).toString('base64'), PORT: String(PORT), RATE_LIMIT_PER_MINUTE: '1000000000', LOG_LEVEL: 'warn', NODE_ENV: 'development' };
    delete env.HTTP_THREADS;
    if (threads) env.HTTP_THREADS = threads;
    const org = cli(env, ['org', 'create', '--name', 'Bench']).id as string;
    const key = cli(env, ['key', 'create', '--org', org, '--scopes', 'leads:read,leads:write']).key as string;
    const server = await startServer(env);
    try {
      serial = 0;
      const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
      const target = { url: `http://127.0.0.1:${PORT}/api/public/v1/leads/batch`, method: 'POST' as const, headers, connections };
      /**
       * WARM_UP_SECONDS then `opts.seconds` of `bodyAt`; the second's leads/s and the server's CPU per lead.
       * Each HTTP thread compiles the app's hot paths for itself: a second of warm-up left two threads still
       * compiling (V8's optimizing compiler on top of the profile) and measured them at twice the CPU per lead.
       */
      const measure = async (bodyAt: () => string) => {
        const warm = await load({ ...target, bodyAt, seconds: WARM_UP_SECONDS });
        const cpu = cpuSecondsOf(server.pid!);
        const run = await load({ ...target, bodyAt, seconds: opts.seconds });
        const spent = cpuSecondsOf(server.pid!) - cpu;
        if (run.non2xx || run.errors || warm.non2xx || warm.errors) throw new Error(`crm serve answered ${run.non2xx + warm.non2xx} non-2xx, ${run.errors + warm.errors} errors`);
        const leads = run.total * BATCH;
        return { answered: (warm.total + run.total) * BATCH, row: `${fmt(leads / opts.seconds, 0)} | ${fmt((spent * 1e6) / leads, 0)} | ${run.p50} | ${run.p99}` };
      };
      const stored = new SqliteDatabase(file, { readonly: true });
      const count = () => (stored.prepare('select count(*) from leads').pluck().get() as number) ?? 0;
      const updates = () => (stored.prepare("select count(*) from events where type = 'lead.updated'").pluck().get() as number) ?? 0;
      try {
        const created = await measure(() => JSON.stringify({ items: Array.from({ length: BATCH }, newLead) }));
        // Requests still in flight when the load stopped land too (never fewer than answered): the count must
        // hold still for a second before the hits pick among the stored leads, found by their external ids.
        let existing = count();
        for (let still = 0; still < 10; still++, existing = count()) {
          await new Promise((r) => setTimeout(r, 100));
          if (count() !== existing) still = -1;
        }
        if (existing < created.answered) throw new Error(`${existing} leads stored for ${created.answered} answered`);
        const serials = (stored.prepare('select external_id from leads').pluck().all() as string[]).map((id) => id.slice('ext-'.length));
        console.log(`| new leads | ${threads ?? 'default'} | ${created.row} |`);
        const hits = await measure(() => {
          const emails = new Set<string>();
          while (emails.size < BATCH) emails.add(`lead${serials[Math.floor(Math.random() * serials.length)]}@bench.example`);
          return JSON.stringify({ upsertBy: 'email', items: [...emails].map((email) => ({ email, name: `Renamed ${serial++}` })) });
        });
        await stop(server);
        if (count() !== existing) throw new Error(`upsert hits created ${count() - existing} leads`);
        if (updates() < hits.answered) throw new Error(`${updates()} lead.updated events for ${hits.answered} hits answered`);
        console.log(`| upsert hits | ${threads ?? 'default'} | ${hits.row} |`);
      } finally {
        stored.close();
      }
    } finally {
      await stop(server);
      rmSync(dir, { recursive: true, force: true });
    }
  }
}
