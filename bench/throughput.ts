import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cli, fmt, load, median, startBaselineProcess, stop, waitForHttp, type LoadResult } from './lib.js';

export interface Scenario {
  name: string;
  method: 'GET' | 'POST';
  path: string;
  /** This scenario's own headers (another organization's key) instead of the table's. */
  headers?: Record<string, string>;
  body?: string;
  /** A different body per request (the n-th): every created lead has its own e-mail and phone. */
  bodyAt?: (n: number) => string;
  bar?: number;
}

/** CPU seconds used so far by the parts of the deployment a table reports (API, database, Redis). */
export type CpuProbe = (server: ChildProcess) => Promise<number[]>;

/** A new person per request: a real import or sign-up flow never repeats one address, and caches must not help. */
export const newLead = (n: number) =>
  JSON.stringify({ name: `Bench Lead ${n}`, email: `bench${n}@example.com`, phoneNumber: `+1415${5_000_000 + (n % 4_000_000)}`, source: 'WEBSITE' });
const newRecord = (n: number) => JSON.stringify({ name: `Project ${n}`, budget: n, due_on: '2027-01-15', contact_email: `project${n}@example.com` });

export const PORT = 3917;
const SCOPES = 'leads:read,leads:write,objects:admin,records:read,records:write';

/** One server process configured by `env`, until `stop`. */
export async function startServer(env: NodeJS.ProcessEnv) {
  const server = spawn(process.execPath, ['dist/src/main.js'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  await waitForHttp(`http://127.0.0.1:${PORT}/health`);
  return server;
}

interface Round {
  bare: LoadResult;
  ours: LoadResult;
  /** CPU milliseconds per request, in the order of the probe's parts. */
  cpu: number[];
}

/** Bodies never repeat, across warm-ups and rounds: each scenario continues its own sequence. */
const nextBody = new Map<Scenario, number>();

/** Our req/s next to the bare server answering the same bytes: one round of one scenario. */
async function measure(s: Scenario, server: ChildProcess, base: string, tableHeaders: Record<string, string>, seconds: number, cpuOf?: CpuProbe): Promise<Round> {
  const headers = s.headers ?? tableHeaders;
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
  const bodyAt = s.bodyAt && ((n: number) => s.bodyAt!((nextBody.get(s) ?? 0) + n));
  const run = async (runSeconds: number) => {
    const result = await load({ url: base + s.path, method: s.method, headers, body: s.body, bodyAt, seconds: runSeconds });
    nextBody.set(s, (nextBody.get(s) ?? 0) + result.total + 1_000);
    return result;
  };
  await run(1);
  const before = cpuOf ? await cpuOf(server) : [];
  const ours = await run(seconds);
  const after = cpuOf ? await cpuOf(server) : [];
  return { bare, ours, cpu: after.map((v, i) => ((v - before[i]!) * 1000) / ours.total) };
}

/**
 * Every scenario against a bare node:http server in interleaved rounds (scenario by scenario, round after
 * round), one row per scenario with the medians: the machine's speed drifts between rounds, a ratio measured
 * within one pair of runs does not drift with it.
 */
export async function table(scenarios: Scenario[], server: ChildProcess, base: string, headers: Record<string, string>, opts: { seconds: number; rounds: number; cpu?: { parts: string[]; probe: CpuProbe } }) {
  const rounds = new Map<Scenario, Round[]>(scenarios.map((s) => [s, []]));
  for (let r = 0; r < opts.rounds; r++) {
    for (const s of scenarios) rounds.get(s)!.push(await measure(s, server, base, headers, opts.seconds, opts.cpu?.probe));
  }
  const cpuHeader = opts.cpu ? ` CPU ms per request: ${opts.cpu.parts.join(' / ')} |` : '';
  console.log(`| scenario | bare node:http req/s | ours req/s | ratio (median of ${opts.rounds}; min–max) | ours p50 / p99 ms | bar |${cpuHeader}`);
  console.log(`|---|---|---|---|---|---|${opts.cpu ? '---|' : ''}`);
  for (const s of scenarios) {
    const rs = rounds.get(s)!;
    const ratios = rs.map((r) => r.ours.rps / r.bare.rps);
    const ratio = median(ratios);
    const verdict = s.bar === undefined ? '' : `≥ ${s.bar} (${ratio >= s.bar ? 'met' : 'NOT met'})`;
    const failed = rs.reduce((n, r) => n + r.ours.non2xx + r.ours.errors, 0);
    const bad = failed > 0 ? ` (${failed} non-2xx or errors)` : '';
    const cpu = opts.cpu ? ` ${opts.cpu.parts.map((_, i) => fmt(median(rs.map((r) => r.cpu[i]!)), 3)).join(' / ')} |` : '';
    const rps = (pick: (r: Round) => number) => fmt(median(rs.map(pick)), 0);
    console.log(`| ${s.name} | ${rps((r) => r.bare.rps)} | ${rps((r) => r.ours.rps)}${bad} | ${fmt(ratio, 3)} (${fmt(Math.min(...ratios), 3)}–${fmt(Math.max(...ratios), 3)}) | ${rps((r) => r.ours.p50)} / ${rps((r) => r.ours.p99)} | ${verdict} |${cpu}`);
  }
}

/** Seeds what the scenarios read (a lead, 200 more to search, an object for records) and returns the scenarios. */
async function seed(base: string, headers: Record<string, string>, bars: { get: number; post: number }): Promise<Scenario[]> {
  const post = (path: string, body: unknown) => fetch(`${base}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const lead = ((await (await post('/leads', { name: 'Ada Lovelace', email: 'ada@example.com', phoneNumber: '+14155550100', source: 'WEBSITE' })).json()) as { data: { lead: { id: string } } }).data.lead;
  for (let i = 0; i < 200; i++) await post('/leads', { name: `Grace Hopper ${i}`, email: `grace${i}@example.com` });
  const fields = [
    { key: 'name', label: 'Name', type: 'text' },
    { key: 'budget', label: 'Budget', type: 'number' },
    { key: 'due_on', label: 'Due on', type: 'date', role: 'due' },
    { key: 'contact_email', label: 'E-mail', type: 'email' },
  ];
  const object = await post('/objects', { slug: 'projects', name: 'Projects', fields });
  if (!object.ok) throw new Error(`creating the bench object: ${object.status} ${await object.text()}`);
  return [
    { name: 'GET /leads/{id}', method: 'GET', path: `/leads/${lead.id}`, bar: bars.get },
    { name: 'POST /leads (a new e-mail and phone each)', method: 'POST', path: '/leads', bodyAt: newLead, bar: bars.post },
    { name: 'GET /leads?q=<e-mail>', method: 'GET', path: `/leads?q=${encodeURIComponent('ada@example.com')}` },
    { name: 'GET /leads?q=<name part>', method: 'GET', path: `/leads?q=${encodeURIComponent('ovela')}` },
    { name: 'POST /objects/projects/records', method: 'POST', path: '/objects/projects/records', bodyAt: newRecord },
  ];
}

/**
 * req/s of our server (its default configuration, rate limit raised) next to a bare node:http server
 * answering the same bytes, measured in the same run with the same load generator: on a temporary SQLite
 * file, or on PostgreSQL + Redis (`database`), where the table also splits the CPU per request.
 * `GET /leads/{id}` reads one lead over and over, the best case of the decryption cache; on SQLite it is
 * measured again with the cache off (every read decrypts the e-mail and phone), the worst case.
 */
export async function runThroughput(opts: { seconds: number; rounds: number; postgres?: { env: NodeJS.ProcessEnv; cpu: CpuProbe; seeded: () => Promise<void> } }): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'crm-bench-'));
  const env = { ...process.env, DATABASE_URL: join(dir, 'crm.db'), PORT: String(PORT), RATE_LIMIT_PER_MINUTE: '1000000000', LOG_LEVEL: 'info', NODE_ENV: 'development', ...opts.postgres?.env };
  if (opts.postgres) cli(env, ['migrate']);
  const org = cli(env, ['org', 'create', '--name', 'Bench']).id as string;
  const key = cli(env, ['key', 'create', '--org', org, '--scopes', SCOPES]).key as string;
  const base = `http://127.0.0.1:${PORT}/api/public/v1`;
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  let server = await startServer(env);
  try {
    const scenarios = await seed(base, headers, opts.postgres ? { get: 0.12, post: 0.05 } : { get: 0.25, post: 0.08 });
    await opts.postgres?.seeded();
    const where = opts.postgres ? 'one instance on PostgreSQL + Redis' : 'SQLite';
    console.log(`\n## Throughput, ${where} (${opts.seconds}s per run, 32 connections, autocannon in the bench process; server and baseline each in their own process)\n`);
    const cpu = opts.postgres && { parts: ['API', 'PostgreSQL', 'Redis'], probe: opts.postgres.cpu };
    await table(scenarios, server, base, headers, { seconds: opts.seconds, rounds: opts.rounds, ...(cpu ? { cpu } : {}) });
    if (opts.postgres) return;
    await stop(server);
    server = await startServer({ ...env, DECRYPTION_CACHE_SIZE: '0' });
    console.log('\nThe same `GET /leads/{id}` with `DECRYPTION_CACHE_SIZE=0` (every read decrypts):\n');
    await table([{ ...scenarios[0]!, name: 'GET /leads/{id}, DECRYPTION_CACHE_SIZE=0', bar: undefined }], server, base, headers, { seconds: opts.seconds, rounds: opts.rounds });
  } finally {
    await stop(server);
    rmSync(dir, { recursive: true, force: true });
  }
}
