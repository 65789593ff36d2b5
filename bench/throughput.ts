import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fmt, load, startBaselineProcess, stop, waitForHttp, type LoadResult } from './lib.js';

interface Scenario {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  /** A different body per request (the n-th): every created lead has its own e-mail and phone. */
  bodyAt?: (n: number) => string;
  bar?: number;
}

/** A new person per request: a real import or sign-up flow never repeats one address, and caches must not help. */
const newLead = (n: number) =>
  JSON.stringify({ name: `Bench Lead ${n}`, email: `bench${n}@example.com`, phoneNumber: `+1415${5_000_000 + (n % 4_000_000)}`, source: 'WEBSITE' });

const PORT = 3917;

function cli(env: NodeJS.ProcessEnv, args: string[]): any {
  const out = spawnSync(process.execPath, ['bin/crm.js', '--json', ...args], { env, encoding: 'utf8' });
  if (out.status !== 0) throw new Error(out.stderr);
  return JSON.parse(out.stdout);
}

/** One server process on `dir`'s database, configured by `env`, until `stop`. */
async function startServer(env: NodeJS.ProcessEnv) {
  const server = spawn(process.execPath, ['dist/src/main.js'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  await waitForHttp(`http://127.0.0.1:${PORT}/health`);
  return server;
}

/** Our req/s next to the bare server answering the same bytes, one row of the table. */
async function measure(s: Scenario, base: string, headers: Record<string, string>, seconds: number): Promise<void> {
  const body = s.bodyAt ? s.bodyAt(-1) : s.body;
  const sample = await fetch(base + s.path, { method: s.method, headers, ...(body ? { body } : {}) });
  const bytes = Buffer.from(await sample.arrayBuffer());
  const baseline = await startBaselineProcess({ status: sample.status, contentType: sample.headers.get('content-type') ?? 'application/json', body: bytes });
  let bare: LoadResult;
  try {
    await load({ url: baseline.url, method: s.method, headers, body: s.body, bodyAt: s.bodyAt, seconds: 1 });
    bare = await load({ url: baseline.url, method: s.method, headers, body: s.body, bodyAt: s.bodyAt, seconds });
  } finally {
    await baseline.close();
  }
  // The warm-up and the measured run continue one sequence of bodies: no lead repeats another.
  let offset = 0;
  const next = s.bodyAt && ((n: number) => s.bodyAt!(offset + n));
  const warm = await load({ url: base + s.path, method: s.method, headers, body: s.body, bodyAt: next, seconds: 1 });
  offset = warm.total + 1_000;
  const ours = await load({ url: base + s.path, method: s.method, headers, body: s.body, bodyAt: next, seconds });
  const ratio = ours.rps / bare.rps;
  const verdict = s.bar === undefined ? '' : `≥ ${s.bar} (${ratio >= s.bar ? 'met' : 'NOT met'})`;
  const bad = ours.non2xx + ours.errors > 0 ? ` (${ours.non2xx} non-2xx, ${ours.errors} errors)` : '';
  console.log(`| ${s.name} | ${fmt(bare.rps, 0)} | ${fmt(ours.rps, 0)}${bad} | ${fmt(ratio, 3)} | ${ours.p50} / ${ours.p99} | ${verdict} |`);
}

/**
 * req/s of our server (its default configuration on a temporary SQLite file, rate limit raised) next to a
 * bare node:http server answering the same bytes, measured in the same run with the same load generator.
 * `GET /leads/{id}` reads one lead over and over, the best case of the decryption cache; it is measured again
 * with the cache off (every read decrypts the e-mail and phone), the worst case.
 */
export async function runThroughput(opts: { seconds: number }): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'crm-bench-'));
  const env = { ...process.env, DATABASE_URL: join(dir, 'crm.db'), PORT: String(PORT), RATE_LIMIT_PER_MINUTE: '1000000000', LOG_LEVEL: 'info', NODE_ENV: 'development' };
  const org = cli(env, ['org', 'create', '--name', 'Bench']).id as string;
  const key = cli(env, ['key', 'create', '--org', org, '--scopes', 'leads:read,leads:write']).key as string;
  const base = `http://127.0.0.1:${PORT}/api/public/v1`;
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  let server = await startServer(env);
  try {
    const seed = await fetch(`${base}/leads`, { method: 'POST', headers, body: JSON.stringify({ name: 'Ada Lovelace', email: 'ada@example.com', phoneNumber: '+14155550100', source: 'WEBSITE' }) });
    const lead = ((await seed.json()) as { data: { lead: { id: string } } }).data.lead;
    for (let i = 0; i < 200; i++) {
      await fetch(`${base}/leads`, { method: 'POST', headers, body: JSON.stringify({ name: `Grace Hopper ${i}`, email: `grace${i}@example.com` }) });
    }
    const scenarios: Scenario[] = [
      { name: 'GET /leads/{id}', method: 'GET', path: `/leads/${lead.id}`, bar: 0.25 },
      { name: 'POST /leads (a new e-mail and phone each)', method: 'POST', path: '/leads', bodyAt: newLead, bar: 0.08 },
      { name: 'GET /leads?q=<e-mail>', method: 'GET', path: `/leads?q=${encodeURIComponent('ada@example.com')}` },
      { name: 'GET /leads?q=<name part>', method: 'GET', path: `/leads?q=${encodeURIComponent('ovela')}` },
    ];
    console.log(`\n## Throughput (${opts.seconds}s per run, 32 connections, autocannon in the bench process; server and baseline each in their own process)\n`);
    console.log('| scenario | bare node:http req/s | ours req/s | ratio | ours p50 / p99 ms | bar |');
    console.log('|---|---|---|---|---|---|');
    for (const s of scenarios) await measure(s, base, headers, opts.seconds);
    await stop(server);
    server = await startServer({ ...env, DECRYPTION_CACHE_SIZE: '0' });
    await measure({ name: 'GET /leads/{id}, DECRYPTION_CACHE_SIZE=0 (every read decrypts)', method: 'GET', path: `/leads/${lead.id}` }, base, headers, opts.seconds);
  } finally {
    await stop(server);
    rmSync(dir, { recursive: true, force: true });
  }
}
