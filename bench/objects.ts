import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import SqliteDatabase from 'better-sqlite3';
import { fmt, percentiles, stop, waitForHttp } from './lib.js';

/*
 * Issue 14's scenario: one organization defines 1,000 custom objects while another creates leads. Bar: the
 * other organization's POST /leads p99 stays within 2× of its quiet value. One server process (default
 * configuration, SQLite file, MAX_OBJECTS_PER_ORG raised to reach 1,000), a closed loop of `connections`
 * lead writers from this process, and one object creator in turn. Not part of `npm test`.
 */
const PORT = 3918;
const OBJECTS = 1_000;
const FIELDS = [
  { key: 'name', label: 'Name', type: 'text', required: true },
  { key: 'notes', label: 'Notes', type: 'long_text' },
  { key: 'amount', label: 'Amount', type: 'number' },
  { key: 'due_on', label: 'Due', type: 'date', role: 'due' },
];
const STAGES = [{ key: 'open', label: 'Open' }, { key: 'done', label: 'Done' }];

function cli(env: NodeJS.ProcessEnv, args: string[]): any {
  const out = spawnSync(process.execPath, ['bin/crm.js', '--json', ...args], { env, encoding: 'utf8' });
  if (out.status !== 0) throw new Error(out.stderr);
  return JSON.parse(out.stdout);
}

interface Window {
  latencies: number[];
  failures: number;
  seconds: number;
}

let leadNumber = 0;

/** `connections` writers each POST a new lead after the previous answer, until `done()`. */
async function writeLeads(url: string, headers: Record<string, string>, connections: number, done: () => boolean): Promise<Window> {
  const latencies: number[] = [];
  let failures = 0;
  const started = performance.now();
  const writer = async () => {
    while (!done()) {
      const n = leadNumber++;
      const body = JSON.stringify({ name: `Quiet Lead ${n}`, email: `quiet${n}@example.com`, phoneNumber: `+1415${5_000_000 + (n % 4_000_000)}`, source: 'WEBSITE' });
      const t0 = performance.now();
      const res = await fetch(url, { method: 'POST', headers, body });
      await res.arrayBuffer();
      latencies.push(performance.now() - t0);
      if (res.status !== 201) failures += 1;
    }
  };
  await Promise.all(Array.from({ length: connections }, writer));
  return { latencies, failures, seconds: (performance.now() - started) / 1000 };
}

const forSeconds = (seconds: number) => {
  const end = performance.now() + seconds * 1000;
  return () => performance.now() >= end;
};

export async function runObjectsBench(opts: { seconds: number; connections?: number }): Promise<void> {
  const connections = opts.connections ?? 16;
  const dir = mkdtempSync(join(tmpdir(), 'crm-bench-objects-'));
  const file = join(dir, 'crm.db');
  const env = { ...process.env, DATABASE_URL: file, PORT: String(PORT), RATE_LIMIT_PER_MINUTE: '1000000000', MAX_OBJECTS_PER_ORG: String(OBJECTS), LOG_LEVEL: 'warn', NODE_ENV: 'development' };
  const quietOrg = cli(env, ['org', 'create', '--name', 'Quiet']).id as string;
  const quietKey = cli(env, ['key', 'create', '--org', quietOrg, '--scopes', 'leads:read,leads:write']).key as string;
  const busyOrg = cli(env, ['org', 'create', '--name', 'Busy']).id as string;
  const busyKey = cli(env, ['key', 'create', '--org', busyOrg, '--scopes', 'objects:admin']).key as string;
  const base = `http://127.0.0.1:${PORT}/api/public/v1`;
  const quiet = { authorization: `Bearer ${quietKey}`, 'content-type': 'application/json' };
  const busy = { authorization: `Bearer ${busyKey}`, 'content-type': 'application/json' };
  const server = spawn(process.execPath, ['dist/src/main.js'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
  try {
    await waitForHttp(`http://127.0.0.1:${PORT}/health`, 120_000);
    await writeLeads(`${base}/leads`, quiet, connections, forSeconds(1));
    const before = await writeLeads(`${base}/leads`, quiet, connections, forSeconds(opts.seconds));

    let created = 0;
    let refused = 0;
    const objectTimes: number[] = [];
    const createObjects = async () => {
      for (let i = 0; i < OBJECTS; i++) {
        const t0 = performance.now();
        const res = await fetch(`${base}/objects`, { method: 'POST', headers: busy, body: JSON.stringify({ slug: `object-${i}`, name: `Object ${i}`, fields: FIELDS, stages: STAGES }) });
        await res.arrayBuffer();
        objectTimes.push(performance.now() - t0);
        if (res.status === 201) created += 1;
        else refused += 1;
      }
    };
    const creating = createObjects();
    let creatingDone = false;
    void creating.finally(() => (creatingDone = true));
    const during = await writeLeads(`${base}/leads`, quiet, connections, () => creatingDone);
    await creating;
    const after = await writeLeads(`${base}/leads`, quiet, connections, forSeconds(opts.seconds));

    const schema = new SqliteDatabase(file, { readonly: true });
    const entries = schema.prepare('select count(*) from sqlite_master').pluck().get() as number;
    schema.close();

    const quietP99 = percentiles(before.latencies).p99;
    const row = (label: string, w: Window) => {
      const p = percentiles(w.latencies);
      const ratio = p.p99 / quietP99;
      const bar = label.startsWith('quiet') ? '' : `≤ 2× (${ratio <= 2 ? 'met' : 'NOT met'})`;
      const bad = w.failures > 0 ? ` (${w.failures} not 201)` : '';
      console.log(`| ${label} | ${w.latencies.length}${bad} | ${fmt(w.latencies.length / w.seconds, 0)} | ${fmt(p.p50, 1)} / ${fmt(p.p99, 1)} / ${fmt(p.max, 1)} | ${fmt(ratio, 2)}× | ${bar} |`);
    };
    const o = percentiles(objectTimes);
    console.log(`\n## Custom objects: another organization's POST /leads while one organization creates ${OBJECTS.toLocaleString('en')} objects (SQLite, ${connections} lead writers)\n`);
    console.log('| phase | leads created | leads/s | p50 / p99 / max ms | p99 vs quiet | bar |');
    console.log('|---|---|---|---|---|---|');
    row(`quiet (${opts.seconds} s, no object created)`, before);
    row(`while ${created} objects were created (${refused} refused)`, during);
    row(`after, with ${created} objects (${opts.seconds} s)`, after);
    console.log(`\nObject creates: p50 ${fmt(o.p50, 1)} ms, p99 ${fmt(o.p99, 1)} ms; sqlite_master holds ${entries} entries with ${created} objects.`);
  } finally {
    await stop(server);
    rmSync(dir, { recursive: true, force: true });
  }
}
