/**
 * Records search benchmark: seeds one custom object with N records in bulk through the store, then measures
 * the service-layer latency (p50/p95/p99) of `q` and `q`+`stage` for common, rare and 1–2 character queries.
 *
 *   node --import tsx bench/records-search.ts [--dialect sqlite|postgres] [--rows 500000] [--runs 40] [--url URL]
 *
 * SQLite works in a temporary file; PostgreSQL in a temporary database created through --url (default
 * postgres://postgres@127.0.0.1:5432/postgres). Both are removed at the end.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import pg from 'pg';
import { loadConfig, type Dialect } from '../src/config.js';
import { closeContext, createContext, type AppContext } from '../src/context.js';
import { openDatabase } from '../src/db/database.js';
import { inTransaction } from '../src/db/transaction.js';
import { createObject } from '../src/modules/objects/objects.service.js';
import { findObject } from '../src/modules/objects/objects.store.js';
import { prepareQuery } from '../src/modules/objects/record-search.js';
import { insertRecords } from '../src/modules/objects/records.store.js';
import { buildNewRecord, listRecords } from '../src/modules/objects/records.service.js';
import { createOrganization } from '../src/modules/orgs/orgs.service.js';

const FIRST = ['james', 'mary', 'john', 'patricia', 'robert', 'jennifer', 'michael', 'linda', 'william', 'elizabeth', 'david', 'barbara', 'richard', 'susan', 'joseph', 'jessica', 'thomas', 'sarah', 'charles', 'karen', 'zoë', 'åsa', 'jürgen', 'léa', 'mohammed', 'wei', 'yuki', 'olga', 'pedro', 'aisha'];
const LAST = ['smith', 'johnson', 'williams', 'brown', 'jones', 'garcia', 'miller', 'davis', 'rodriguez', 'martinez', 'hernandez', 'lopez', 'gonzalez', 'wilson', 'anderson', 'thomas', 'taylor', 'moore', 'jackson', 'martin', 'müller', 'nguyen', 'kowalski', 'okafor', 'dubois', 'rossi', 'tanaka', 'ivanova', 'silva', 'kim'];
const WORDS = 'renewal contract invoice shipment warehouse onboarding meeting follow up quarterly budget approval pending signature pricing discount demo trial upgrade migration support ticket escalation feedback workshop roadmap integration license audit compliance security review kickoff proposal negotiation deadline delivery payment reminder call email visit partner reseller enterprise startup retail logistics healthcare finance'.split(' ');
const SUFFIX = ['inc', 'ltd', 'gmbh', 'sa', 'llc', 'group', 'labs', 'systems', 'partners', 'holdings'];
const STAGES = [['lead', 40], ['qualified', 25], ['proposal', 15], ['won', 10], ['lost', 10]] as const;
/** A word seeded into about one record in 10,000: the "rare" query. */
const RARE = 'quixotic';

/** Seeded PRNG (mulberry32), so every run searches the same data. */
function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

function recordInput(next: () => number) {
  const pick = <T>(list: readonly T[]) => list[Math.floor(next() * list.length)]!;
  const cap = (w: string) => w[0]!.toUpperCase() + w.slice(1);
  const words = Array.from({ length: 5 + Math.floor(next() * 15) }, () => pick(WORDS));
  if (next() < 0.0001) words.splice(Math.floor(next() * words.length), 0, RARE);
  let roll = next() * 100;
  const stage = STAGES.find(([, weight]) => (roll -= weight) < 0)![0];
  const first = pick(FIRST);
  const last = pick(LAST);
  return {
    name: `${cap(first)} ${cap(last)}`,
    company: `${cap(pick(WORDS))} ${cap(pick(LAST))} ${pick(SUFFIX).toUpperCase()}`,
    notes: `${cap(words.join(' '))}. Ref ${Math.floor(next() * 1e6)}.`,
    email: `${first.normalize('NFD').replace(/[^a-z]/g, '')}.${last.normalize('NFD').replace(/[^a-z]/g, '')}@example.com`,
    stage,
  };
}

interface Target {
  ctx: AppContext;
  cleanup(): Promise<void>;
}

async function openTarget(dialect: Dialect, url: string | undefined): Promise<Target> {
  const key = randomBytes(32).toString('base64');
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'crm-bench-'));
    const config = loadConfig({ DATABASE_URL: join(dir, 'bench.db'), ENCRYPTION_KEY: key, LOG_LEVEL: 'silent' }, () => undefined);
    const ctx = await createContext(config);
    return { ctx, cleanup: async () => { await closeContext(ctx); rmSync(dir, { recursive: true, force: true }); } };
  }
  const admin = new URL(url ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  const name = `crm_bench_${process.pid}`;
  const run = async (statement: string) => {
    const client = new pg.Client({ connectionString: admin.toString() });
    await client.connect();
    await client.query(statement);
    await client.end();
  };
  await run(`create database ${name}`);
  const target = new URL(admin);
  target.pathname = `/${name}`;
  const config = loadConfig({ DATABASE_URL: target.toString(), ENCRYPTION_KEY: key, LOG_LEVEL: 'silent' }, () => undefined);
  const ctx = await createContext(config, { database: openDatabase({ ...config.database, poolSize: 4 }) });
  return { ctx, cleanup: async () => { await closeContext(ctx); await run(`drop database if exists ${name} with (force)`); } };
}

async function seed(ctx: AppContext, rows: number): Promise<{ org: { id: string; timezone: string }; seconds: number }> {
  const org = await createOrganization(ctx, { name: 'Bench', timezone: 'UTC' });
  await inTransaction(ctx, (trx) =>
    createObject(ctx, trx, org.id, {
      slug: 'contacts',
      name: 'Contacts',
      fields: [
        { key: 'name', label: 'Name', type: 'text', required: true },
        { key: 'company', label: 'Company', type: 'text' },
        { key: 'notes', label: 'Notes', type: 'long_text' },
        { key: 'email', label: 'E-mail', type: 'email' },
      ],
      stages: STAGES.map(([key]) => ({ key, label: key })),
    }),
  );
  const object = (await findObject(ctx.database.db, ctx.database.dialect, org.id, 'contacts'))!;
  const next = rng(42);
  const start = performance.now();
  const BATCH = 5_000;
  for (let done = 0; done < rows; done += BATCH) {
    const now = new Date(Date.UTC(2026, 0, 1) + done * 1000);
    const batch = Array.from({ length: Math.min(BATCH, rows - done) }, () => buildNewRecord(ctx, object, recordInput(next), now));
    await ctx.database.db.transaction().execute((trx) => insertRecords(trx, ctx.database.dialect, object, batch));
    if (process.stderr.isTTY) process.stderr.write(`\rseeding ${done + batch.length}/${rows}`);
  }
  if (process.stderr.isTTY) process.stderr.write('\n');
  // What autovacuum does after a bulk load: statistics for the planner, a visibility map for index-only counts.
  if (ctx.database.dialect === 'postgres') await sql`vacuum analyze records`.execute(ctx.database.db);
  return { org, seconds: (performance.now() - start) / 1000 };
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

async function measure(ctx: AppContext, org: { id: string; timezone: string }, query: { q?: string; stage?: string }, runs: number) {
  const call = () => listRecords(ctx, org, 'contacts', { ...query, page: 1, limit: 25 });
  for (let i = 0; i < 3; i += 1) await call();
  const times: number[] = [];
  const cpu: number[] = [];
  let total = 0;
  for (let i = 0; i < runs; i += 1) {
    const start = performance.now();
    const used = process.cpuUsage();
    total = (await call()).pagination.total ?? 0;
    const spent = process.cpuUsage(used);
    times.push(performance.now() - start);
    cpu.push((spent.user + spent.system) / 1000);
  }
  times.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  // CPU time of this process: on SQLite (in-process) the query's own cost, whatever else the machine runs.
  return { total, p50: percentile(times, 50), p95: percentile(times, 95), p99: percentile(times, 99), cpu95: percentile(cpu, 95) };
}

/** The same count by a full scan (strpos/instr on search_text): proves the indexed totals exact. Not timed. */
async function scanCount(ctx: AppContext, query: { q?: string; stage?: string }): Promise<number> {
  const find = ctx.database.dialect === 'postgres' ? 'strpos(search_text, $1) > 0' : 'instr(search_text, ?) > 0';
  const stage = query.stage === undefined ? '' : ctx.database.dialect === 'postgres' ? ' and stage = $2' : ' and stage = ?';
  const parameters = [prepareQuery(query.q ?? '').text, ...(query.stage === undefined ? [] : [query.stage])];
  const result = await sql.raw<{ n: number }>(`select count(*) as n from records where ${find}${stage}`).compile(ctx.database.db);
  const { rows } = await ctx.database.db.executeQuery<{ n: number }>({ ...result, parameters });
  return Number(rows[0]!.n);
}

export const QUERIES: { label: string; q?: string }[] = [
  { label: 'no q (newest page)' },
  { label: 'common surname', q: 'johnson' },
  { label: 'common trigram', q: 'son' },
  { label: 'word in notes', q: 'invoice' },
  { label: 'company phrase', q: 'smith inc' },
  { label: 'rare word', q: RARE },
  { label: 'no match', q: 'zzqx' },
  { label: '2 chars common', q: 'jo' },
  { label: '2 chars rare', q: 'zq' },
  { label: '1 char common', q: 'e' },
  { label: '1 char rare', q: 'ü' },
];

export async function runRecordsSearchBench(opts: { dialect: Dialect; rows: number; runs: number; url?: string }): Promise<void> {
  const target = await openTarget(opts.dialect, opts.url);
  try {
    const { org, seconds } = await seed(target.ctx, opts.rows);
    console.log(`records search, ${opts.dialect}, ${opts.rows.toLocaleString('en')} records in one object: seeded in ${seconds.toFixed(1)} s (${Math.round(opts.rows / seconds).toLocaleString('en')} rows/s); ${opts.runs} runs per query, limit 25, stage "won"`);
    // The figures depend on what else the machine is doing; say so next to them.
    console.log(`${cpus().length} CPUs, load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
    const ms = (n: number) => n.toFixed(1).padStart(6);
    const head = ['p50', 'p95', 'p99', 'cpu95'].map((h) => h.padStart(6)).join(' ');
    console.log(`${'query'.padEnd(34)}${'total'.padStart(8)} ${head} |${'+stage'.padStart(7)} ${head}   (ms; cpu95: this process's CPU time, p95)`);
    for (const { label, q } of QUERIES) {
      const alone = await measure(target.ctx, org, q === undefined ? {} : { q }, opts.runs);
      const staged = await measure(target.ctx, org, { ...(q === undefined ? {} : { q }), stage: 'won' }, opts.runs);
      for (const [query, total] of [[{ q }, alone.total], [{ q, stage: 'won' }, staged.total]] as const) {
        const expected = await scanCount(target.ctx, query);
        if (expected !== total) throw new Error(`${label}: total ${total}, but a full scan counts ${expected}`);
      }
      const name = `${label}${q === undefined ? '' : ` "${q}"`}`.padEnd(34);
      const cols = (m: typeof alone) => [m.p50, m.p95, m.p99, m.cpu95].map(ms).join(' ');
      console.log(`${name}${String(alone.total).padStart(8)} ${cols(alone)} |${String(staged.total).padStart(7)} ${cols(staged)}`);
    }
    console.log('every total above equals a full-scan count');
  } finally {
    await target.cleanup();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({ options: { dialect: { type: 'string', default: 'sqlite' }, rows: { type: 'string', default: '500000' }, runs: { type: 'string', default: '40' }, url: { type: 'string' } } });
  if (values.dialect !== 'sqlite' && values.dialect !== 'postgres') throw new Error('--dialect must be sqlite or postgres');
  await runRecordsSearchBench({ dialect: values.dialect, rows: Number(values.rows), runs: Number(values.runs), ...(values.url ? { url: values.url } : {}) });
}
