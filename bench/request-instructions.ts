import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { closeContext, createContext } from '../src/context.js';
import { benchDatabase } from './lib.js';
import { createApiKey, createOrganization } from '../src/modules/orgs/orgs.service.js';

/**
 * Instructions per request, counted by valgrind's callgrind, not timed: the same count for the same build whatever
 * else the machine is doing. Run under `valgrind --tool=callgrind` (see docs/performance.md); for each scenario
 * (`GET /leads/{id}`, then `POST /leads` with a new person each) it warms up, zeroes callgrind's counters, makes
 * N requests through the app in this process (`app.inject`: no socket) and dumps the counters: one dump file per
 * scenario, whose total divided by N is one request. Arguments: N (default 1,000), then the warm-up's length
 * (default 3,000: after a few hundred requests V8 is still compiling the hot paths, and a build whose code is
 * optimized later counts the unoptimized code's inline-cache misses, not its steady cost).
 *
 * On a fresh SQLite file by default; with `--postgres ADMIN_URL` (and `--redis URL`) on a database of its own on
 * that server, the deployment of the scale-out mode (rate limit in Redis): the count is then the API process's
 * share of a request there, without PostgreSQL's and Redis's own work, which run in their processes.
 */
const { values: options, positionals } = parseArgs({ allowPositionals: true, options: { postgres: { type: 'string' }, redis: { type: 'string' } } });
const N = Number(positionals[0] ?? 1_000);
const WARMUP = Number(positionals[1] ?? 3_000);

// Under valgrind the app takes minutes to start: watchdog timers (Fastify's 10 s plugin timeout, periodic jobs)
// would fire and, in the measured phase, add work that depends on the wall clock. Long timers are held off.
const setTimer = globalThis.setTimeout;
globalThis.setTimeout = ((fn: (...args: unknown[]) => void, ms?: number, ...args: unknown[]) => setTimer(fn, (ms ?? 0) >= 1_000 ? 2 ** 31 - 1 : ms, ...args)) as typeof setTimeout;
const callgrind = (flag: '--zero' | '--dump') => execFileSync('callgrind_control', [flag, String(process.pid)], { stdio: 'ignore' });

const dir = mkdtempSync(join(tmpdir(), 'crm-instructions-'));
const postgres = options.postgres === undefined ? undefined : await benchDatabase(options.postgres, 'crm_bench_instructions');
const env = { DATABASE_URL: postgres?.url ?? join(dir, 'crm.db'), ...(options.redis && { REDIS_URL: options.redis }) };
const config = loadConfig({ ...env, ENCRYPTION_KEY: randomBytes(32).toString('base64'), LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '1000000000' }, () => undefined);
const ctx = await createContext(config);
const app = await buildApp(ctx, { logger: false });
await app.ready();
const org = await createOrganization(ctx, { name: 'Instructions', timezone: 'UTC' });
const { key } = await createApiKey(ctx, { organizationId: org.id, scopes: ['leads:read', 'leads:write'], name: 'bench' });
const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
const newLead = (n: number) => ({ name: `Bench Lead ${n}`, email: `bench${n}@example.com`, phoneNumber: `+1415${5_000_000 + n}`, source: 'WEBSITE' });
const created = await app.inject({ method: 'POST', url: '/api/public/v1/leads', headers, payload: newLead(-1) });
const leadId = (created.json() as { data: { lead: { id: string } } }).data.lead.id;

const scenarios = {
  get: () => app.inject({ method: 'GET', url: `/api/public/v1/leads/${leadId}`, headers }),
  post: (n: number) => app.inject({ method: 'POST', url: '/api/public/v1/leads', headers, payload: newLead(n) }),
};
let n = 0;
for (const [name, request] of Object.entries(scenarios)) {
  const run = async (count: number) => {
    for (let i = 0; i < count; i++) {
      const res = await request(n++);
      if (res.statusCode >= 300) throw new Error(`${name} answered ${res.statusCode}: ${res.body}`);
    }
  };
  await run(WARMUP);
  callgrind('--zero');
  await run(N);
  callgrind('--dump');
}
await app.close();
await closeContext(ctx);
await postgres?.drop();
rmSync(dir, { recursive: true, force: true });
process.exit(0);
