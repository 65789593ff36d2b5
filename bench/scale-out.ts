import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import autocannon from 'autocannon';
import { analyzeDatabase, backendCpu, benchDatabase, cli, cpuOfCommand, cpuSecondsOf, fmt, spentSince, stop, waitForHttp, type LoadResult } from './lib.js';

/**
 * One `crm serve` against two, on one PostgreSQL with Redis (`npm run bench -- --only scale-out --postgres
 * URL [--redis URL]`). The same total load (32 connections) is offered to one instance, then split across
 * two; next to req/s it reports where the CPU went — API processes, the PostgreSQL backends of its own
 * database, Redis (the whole server: it is shared), the load generator — per request, which is what predicts
 * a bigger deployment (docs/scaling.md).
 */
const BASE_PORT = 3931;
const CONNECTIONS = 32;

interface Scenario {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  /** A fresh body per request (distinct names and e-mails, as real sign-ups are). */
  body?: (n: number) => string;
}

let sequence = 0;

async function load(opts: { url: string; scenario: Scenario; headers: Record<string, string>; seconds: number; connections: number }): Promise<LoadResult> {
  const { scenario } = opts;
  const result = await autocannon({
    url: opts.url + scenario.path,
    method: scenario.method,
    headers: opts.headers,
    duration: opts.seconds,
    connections: opts.connections,
    ...(scenario.body ? { requests: [{ setupRequest: (req: autocannon.Request) => ({ ...req, body: scenario.body!(++sequence) }) }] } : {}),
  });
  return { rps: result.requests.average, total: result.requests.total, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx, errors: result.errors };
}

interface Sample {
  instances: number;
  scenario: string;
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  /** CPU milliseconds per request. */
  api: number;
  postgres: number;
  redis: number;
  generator: number;
  /** CPU seconds used per wall second by everything measured (2 = both cores of this machine busy). */
  cores: number;
}

interface Probe {
  admin: pg.Client;
  database: string;
}

async function measure(probe: Probe, instances: ChildProcess[], urls: string[], scenario: Scenario, headers: Record<string, string>, seconds: number): Promise<Sample> {
  const per = Math.floor(CONNECTIONS / urls.length);
  await Promise.all(urls.map((url) => load({ url, scenario, headers, seconds: 1, connections: per })));
  const cpu = async () => ({ api: instances.reduce((n, p) => n + cpuSecondsOf(p.pid!), 0), postgres: await backendCpu(probe.admin, probe.database), redis: cpuOfCommand('redis-server'), generator: process.cpuUsage() });
  const before = await cpu();
  const started = Date.now();
  const runs: LoadResult[] = await Promise.all(urls.map((url) => load({ url, scenario, headers, seconds, connections: per })));
  const wall = (Date.now() - started) / 1000;
  const after = await cpu();
  const postgres = spentSince(before.postgres, after.postgres);
  const total = runs.reduce((n, r) => n + r.total, 0);
  const generator = (after.generator.user + after.generator.system - before.generator.user - before.generator.system) / 1e6;
  const perRequest = (s: number) => (s * 1000) / total;
  const used = after.api - before.api + postgres + (after.redis - before.redis) + generator;
  return {
    instances: urls.length,
    scenario: scenario.name,
    rps: total / wall,
    p50: Math.max(...runs.map((r) => r.p50)),
    p99: Math.max(...runs.map((r) => r.p99)),
    errors: runs.reduce((n, r) => n + r.errors + r.non2xx, 0),
    api: perRequest(after.api - before.api),
    postgres: perRequest(postgres),
    redis: perRequest(after.redis - before.redis),
    generator: perRequest(generator),
    cores: used / wall,
  };
}

export async function runScaleOut(opts: { pgUrl: string; redisUrl: string; seconds: number }): Promise<void> {
  const database = await benchDatabase(opts.pgUrl, 'crm_bench_scale');
  const { name, admin } = database;
  const env = {
    ...process.env,
    DATABASE_URL: database.url,
    REDIS_URL: opts.redisUrl,
    ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    DISPATCHER: 'off',
    RATE_LIMIT_PER_MINUTE: '1000000000',
    LOG_LEVEL: 'warn',
    NODE_ENV: 'production',
  };
  const samples: Sample[] = [];
  try {
    cli(env, ['migrate']);
    const org = cli(env, ['org', 'create', '--name', 'Bench']).id as string;
    const key = cli(env, ['key', 'create', '--org', org, '--scopes', 'leads:read,leads:write']).key as string;
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    for (const instances of [1, 2]) {
      const ports = Array.from({ length: instances }, (_, i) => BASE_PORT + i);
      const servers = ports.map((port) => spawn(process.execPath, ['dist/src/main.js'], { env: { ...env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'inherit'] }));
      const urls = ports.map((p) => `http://127.0.0.1:${p}`);
      try {
        await Promise.all(urls.map((u) => waitForHttp(`${u}/health`)));
        const seed = await fetch(`${urls[0]}/api/public/v1/leads`, { method: 'POST', headers, body: JSON.stringify({ name: 'Ada Lovelace', email: 'ada@example.com' }) });
        const id = ((await seed.json()) as { data: { lead: { id: string } } }).data.lead.id;
        await analyzeDatabase(database.url);
        const scenarios: Scenario[] = [
          { name: 'GET /leads/{id}', method: 'GET', path: `/api/public/v1/leads/${id}` },
          { name: 'POST /leads', method: 'POST', path: '/api/public/v1/leads', body: (n) => JSON.stringify({ name: `Bench Lead ${n}`, email: `lead${n}.${instances}@example.com`, source: 'WEBSITE' }) },
        ];
        for (const scenario of scenarios) {
          samples.push(await measure({ admin, database: name }, servers, urls, scenario, headers, opts.seconds));
        }
      } finally {
        await Promise.all(servers.map((s) => stop(s)));
      }
    }
  } finally {
    await database.drop();
  }
  console.log(`\n## Scale-out: one vs two crm serve on one PostgreSQL + Redis (${opts.seconds}s per run, ${CONNECTIONS} connections in total)\n`);
  console.log('| scenario | instances | req/s | p50 / p99 ms | CPU ms per request: API / PostgreSQL / Redis / load generator | cores busy |');
  console.log('|---|---|---|---|---|---|');
  for (const s of samples) {
    const bad = s.errors ? ` (${s.errors} errors)` : '';
    console.log(`| ${s.scenario} | ${s.instances} | ${fmt(s.rps, 0)}${bad} | ${s.p50} / ${s.p99} | ${fmt(s.api)} / ${fmt(s.postgres)} / ${fmt(s.redis)} / ${fmt(s.generator)} | ${fmt(s.cores, 2)} |`);
  }
}
