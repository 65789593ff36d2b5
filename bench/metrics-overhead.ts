import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createMetrics } from '../src/observability/metrics.js';
import { systemClock } from '../src/lib/clock.js';
import { cpuSecondsOf, fmt, load, stop, waitForHttp } from './lib.js';

const PORT = 3918;
const TOKEN = 'bench-metrics-token-0123456789';

function cli(env: NodeJS.ProcessEnv, args: string[]): any {
  const out = spawnSync(process.execPath, ['bin/crm.js', '--json', ...args], { env, encoding: 'utf8' });
  if (out.status !== 0) throw new Error(out.stderr);
  return JSON.parse(out.stdout);
}

/** The hook's own work, in isolation: one counter increment and one histogram observation per response. */
function hookMicros(): number {
  const metrics = createMetrics({ outbox: { newestSeq: async () => 0 }, clock: systemClock });
  const n = 500_000;
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    const labels = { method: 'GET', route: '/api/public/v1/leads/:id', status: i % 10 === 0 ? '404' : '200' };
    metrics.httpRequests.inc(labels);
    metrics.httpDuration.observe(labels, 0.0004);
  }
  return ((performance.now() - start) * 1000) / n;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * What the metrics hook costs per request: the same server without METRICS_TOKEN (no hook at all) and with
 * it (counter + histogram per response), alternated `rounds` times. The figure is the server process's CPU
 * time per request (from /proc), which other load on a shared machine disturbs far less than req/s.
 */
export async function runMetricsOverhead(opts: { seconds: number; rounds: number }): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'crm-bench-metrics-'));
  const base = { ...process.env, DATABASE_URL: join(dir, 'crm.db'), PORT: String(PORT), RATE_LIMIT_PER_MINUTE: '1000000000', LOG_LEVEL: 'silent', NODE_ENV: 'development' };
  const org = cli(base, ['org', 'create', '--name', 'Bench']).id as string;
  const key = cli(base, ['key', 'create', '--org', org, '--scopes', 'leads:read']).key as string;
  const paths: { name: string; path: string; headers: Record<string, string> }[] = [
    { name: 'GET /health', path: '/health', headers: {} },
    { name: 'GET /api/public/v1/me', path: '/api/public/v1/me', headers: { authorization: `Bearer ${key}` } },
  ];
  const cpu: Record<string, Record<'off' | 'on', number[]>> = Object.fromEntries(paths.map((p) => [p.name, { off: [], on: [] }]));
  const rps: Record<string, Record<'off' | 'on', number[]>> = Object.fromEntries(paths.map((p) => [p.name, { off: [], on: [] }]));
  try {
    for (let round = 0; round < opts.rounds; round++) {
      for (const variant of ['off', 'on'] as const) {
        const env = { ...base, ...(variant === 'on' ? { METRICS_TOKEN: TOKEN } : {}) };
        const server = spawn(process.execPath, ['dist/src/main.js'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
        try {
          await waitForHttp(`http://127.0.0.1:${PORT}/health`);
          for (const p of paths) {
            const url = `http://127.0.0.1:${PORT}${p.path}`;
            await load({ url, headers: p.headers, seconds: 1 });
            const before = cpuSecondsOf(server.pid!);
            const run = await load({ url, headers: p.headers, seconds: opts.seconds });
            cpu[p.name]![variant].push(((cpuSecondsOf(server.pid!) - before) / run.total) * 1e6);
            rps[p.name]![variant].push(run.rps);
          }
        } finally {
          await stop(server);
        }
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`\n## Metrics hook overhead (${opts.rounds} alternating rounds of ${opts.seconds}s, 32 connections; medians)\n`);
  console.log('| route | server CPU per request, no METRICS_TOKEN | with METRICS_TOKEN | hook cost | req/s without / with |');
  console.log('|---|---|---|---|---|');
  for (const p of paths) {
    const [off, on] = [median(cpu[p.name]!.off), median(cpu[p.name]!.on)];
    console.log(`| ${p.name} | ${fmt(off, 1)} µs | ${fmt(on, 1)} µs | ${fmt(on - off, 1)} µs (${fmt(((on - off) / off) * 100, 1)}%) | ${fmt(median(rps[p.name]!.off), 0)} / ${fmt(median(rps[p.name]!.on), 0)} |`);
  }
  console.log(`\nThe hook's work alone (counter + histogram, ${fmt(hookMicros(), 2)} µs per response, measured in this process).`);
  console.log(`CPU µs per request, every round: ${JSON.stringify(cpu, (_k, v) => (typeof v === 'number' ? Math.round(v * 10) / 10 : v))}`);
}
