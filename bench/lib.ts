import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { createServer } from 'node:http';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';
import pg from 'pg';
import { randomBytes } from 'node:crypto';
import { loadConfig, type Dialect } from '../src/config.js';
import { closeContext, createContext, type AppContext } from '../src/context.js';
import { openDatabase } from '../src/db/database.js';

export interface LoadResult {
  rps: number;
  /** Requests completed during the run. */
  total: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

/** A fixed-length load from this process (same generator for the baseline and for us, so ratios are fair). */
export async function load(opts: {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** A body per request (the n-th), instead of one fixed body. */
  bodyAt?: (n: number) => string;
  seconds: number;
  connections?: number;
}): Promise<LoadResult> {
  let n = 0;
  const bodyAt = opts.bodyAt;
  const result = await autocannon({
    url: opts.url,
    method: opts.method ?? 'GET',
    headers: opts.headers,
    body: opts.body,
    ...(bodyAt ? { requests: [{ setupRequest: (request: autocannon.Request) => ({ ...request, body: bodyAt(n++) }) }] } : {}),
    duration: opts.seconds,
    connections: opts.connections ?? 32,
  });
  return { rps: result.requests.average, total: result.requests.total, p50: result.latency.p50, p99: result.latency.p99, non2xx: result.non2xx, errors: result.errors };
}

/** The bare node:http baseline: answers every request with exactly the given status, type and bytes. */
export async function startBaseline(answer: { status: number; contentType: string; body: Buffer }) {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(answer.status, { 'content-type': answer.contentType, 'content-length': answer.body.length });
      res.end(answer.body);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** Runs the baseline in its own process, like the real server, so both get a core of their own the same way. */
export async function startBaselineProcess(answer: { status: number; contentType: string; body: Buffer }) {
  const child = spawn(process.execPath, ['--input-type=module', '-e', `
    import { createServer } from 'node:http';
    const body = Buffer.from(${JSON.stringify(answer.body.toString('base64'))}, 'base64');
    const server = createServer((req, res) => { req.resume(); req.on('end', () => {
      res.writeHead(${answer.status}, { 'content-type': ${JSON.stringify(answer.contentType)}, 'content-length': body.length });
      res.end(body); }); });
    server.listen(0, '127.0.0.1', () => console.log(server.address().port));`], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [chunk] = (await once(child.stdout!, 'data')) as [Buffer];
  return { url: `http://127.0.0.1:${chunk.toString().trim()}`, close: () => stop(child) };
}

export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await once(child, 'exit');
}

export async function waitForHttp(url: string, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not come up`);
}

export function percentiles(samples: number[]): { p50: number; p95: number; p99: number; max: number } {
  const s = [...samples].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
  return { p50: at(50), p95: at(95), p99: at(99), max: s[s.length - 1]! };
}

export async function timeIt(fn: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

export const fmt = (n: number, digits = 2) => n.toFixed(digits);

/** CPU seconds (user + system) a process has used so far, from /proc (Linux). */
export function cpuSecondsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // utime and stime are fields 14 and 15 of the whole line, i.e. 12 and 13 after "pid (comm) ".
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export const median = (values: number[]): number => {
  const s = [...values].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** `crm --json …` against the environment's database; its parsed output. */
export function cli(env: NodeJS.ProcessEnv, args: string[]): any {
  const out = spawnSync(process.execPath, ['bin/crm.js', '--json', ...args], { env, encoding: 'utf8' });
  if (out.status !== 0) throw new Error(out.stderr);
  return JSON.parse(out.stdout);
}

/** CPU seconds of the PostgreSQL backends serving `database` (other databases on the server are someone else's load). */
export async function backendCpu(admin: pg.Client, database: string): Promise<Map<number, number>> {
  const { rows } = await admin.query<{ pid: number }>('select pid from pg_stat_activity where datname = $1', [database]);
  const out = new Map<number, number>();
  for (const { pid } of rows) {
    try {
      out.set(pid, cpuSecondsOf(pid));
    } catch {
      /* exited meanwhile */
    }
  }
  return out;
}

export const spentSince = (before: Map<number, number>, after: Map<number, number>) => [...after].reduce((n, [pid, cpu]) => n + cpu - (before.get(pid) ?? 0), 0);

/** CPU seconds of every process whose command name is `name` (redis-server). */
export function cpuOfCommand(name: string): number {
  let total = 0;
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === name) total += cpuSecondsOf(Number(pid));
    } catch {
      /* exited meanwhile */
    }
  }
  return total;
}

/**
 * Statistics for a freshly filled bench database, as a database in service has them: a table just filled has
 * none until autovacuum's next pass (a minute or more), and without them the planner may read a lead by id
 * through an index on its organization — every row of the bench's one organization — instead of the unique
 * index on id (0.56 ms of PostgreSQL time per GET instead of 0.007 at 2,500 leads, pg_stat_statements).
 */
export async function analyzeDatabase(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('analyze').finally(() => client.end());
}

/** A database of its own on the PostgreSQL server at `adminUrl` (an admin URL), dropped by `drop`. */
export async function benchDatabase(adminUrl: string, prefix: string) {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    admin,
    drop: async () => {
      await admin.query(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

/** A fresh database for one benchmark (a temp SQLite file, or a new PostgreSQL database created from an admin URL) and its context. */
export async function openBench(name: string, dialect: Dialect, pgUrl?: string): Promise<{ ctx: AppContext; drop(): Promise<void> }> {
  const key = randomBytes(32).toString('base64');
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), `crm-bench-${name}-`));
    const ctx = await createContext(loadConfig({ DATABASE_URL: join(dir, 'crm.db'), ENCRYPTION_KEY: key, LOG_LEVEL: 'silent' }, () => undefined));
    return { ctx, drop: async () => { await closeContext(ctx); rmSync(dir, { recursive: true, force: true }); } };
  }
  const bench = await benchDatabase(pgUrl!, `crm_bench_${name}`);
  const config = loadConfig({ DATABASE_URL: bench.url, ENCRYPTION_KEY: key, LOG_LEVEL: 'silent' }, () => undefined);
  const ctx = await createContext(config, { database: openDatabase(config.database) });
  return { ctx, drop: async () => { await closeContext(ctx); await bench.drop(); } };
}
