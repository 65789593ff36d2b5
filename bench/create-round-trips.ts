import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import type { FastifyInstance } from 'fastify';
import { benchDatabase, fmt, median } from './lib.js';

/**
 * `node dist/bench/create-round-trips.js --postgres ADMIN_URL [--against ROOT] [--warmup 200] [--requests 1500]`:
 * the PostgreSQL round trips and the latency of `POST /leads` through `app.inject` (no socket), per kind of
 * body, for this build and, with `--against`, another checkout's build (ROOT/dist, built with `npm run build`):
 * both apps in this process on one database of their own, a request of one then of the other, which goes first
 * alternating, so that both see the same moments of a shared machine. A round trip is a simple-protocol message
 * or an extended-protocol exchange (ended by Sync) of this process's node-pg, counted for the builds that load
 * the same `pg` module (checkouts sharing one node_modules).
 */
const { values } = parseArgs({ options: { postgres: { type: 'string' }, against: { type: 'string' }, warmup: { type: 'string', default: '200' }, requests: { type: 'string', default: '1500' } } });
if (values.postgres === undefined) throw new Error('--postgres ADMIN_URL is required');
const WARMUP = Number(values.warmup);
const REQUESTS = Number(values.requests);

interface Build {
  name: string;
  app: FastifyInstance;
  headers: Record<string, string>;
  close(): Promise<void>;
}

let sent = 0;
const { query, sync } = pg.Connection.prototype;
pg.Connection.prototype.query = function (this: pg.Connection, text: string) {
  sent += 1;
  return query.call(this, text);
};
pg.Connection.prototype.sync = function (this: pg.Connection) {
  sent += 1;
  return sync.call(this);
};

const database = await benchDatabase(values.postgres, 'crm_bench_create_trips');
const encryptionKey = randomBytes(32).toString('base64');

/** One build's app on the bench database, with an organization and a key of its own. */
async function open(name: string, dist: string): Promise<Build> {
  const load = (path: string) => import(pathToFileURL(join(dist, path)).href);
  const [{ buildApp }, { loadConfig }, { createContext, closeContext }, { createApiKey, createOrganization }] = await Promise.all([
    load('src/app.js'),
    load('src/config.js'),
    load('src/context.js'),
    load('src/modules/orgs/orgs.service.js'),
  ]);
  const env = { DATABASE_URL: database.url, ENCRYPTION_KEY: encryptionKey, LOG_LEVEL: 'silent', RATE_LIMIT_PER_MINUTE: '1000000000' };
  const ctx = await createContext(loadConfig(env, () => undefined));
  const app: FastifyInstance = await buildApp(ctx, { logger: false });
  await app.ready();
  const org = await createOrganization(ctx, { name, timezone: 'UTC' });
  const { key } = await createApiKey(ctx, { organizationId: org.id, scopes: ['leads:read', 'leads:write'], name: 'bench' });
  return {
    name,
    app,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    close: async () => {
      await app.close();
      await closeContext(ctx);
    },
  };
}

const builds = [await open('this build', resolve(import.meta.dirname, '..'))];
if (values.against !== undefined) builds.unshift(await open(values.against, join(resolve(values.against), 'dist')));

const bodies: Record<string, (n: number) => object> = {
  'name + e-mail': (n) => ({ name: `Trip ${n}`, email: `trip${n}@example.com` }),
  'name + e-mail + phone': (n) => ({ name: `Trip ${n}`, email: `trip${n}@example.com`, phoneNumber: `+1415${5_000_000 + n}` }),
  'name only': (n) => ({ name: `Trip ${n}` }),
};

let serial = 0;
/** One create by `build`: its latency in ms and its round trips. */
async function create(build: Build, body: (n: number) => object): Promise<{ ms: number; trips: number }> {
  const before = sent;
  const start = process.hrtime.bigint();
  const res = await build.app.inject({ method: 'POST', url: '/api/public/v1/leads', headers: build.headers, payload: body(serial++) });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (res.statusCode !== 201) throw new Error(`${build.name} answered ${res.statusCode}: ${res.body}`);
  return { ms, trips: sent - before };
}

console.log('| `POST /leads` body | build | round trips | median ms | p90 ms | mean ms |');
console.log('|---|---|---|---|---|---|');
for (const [kind, body] of Object.entries(bodies)) {
  for (let i = 0; i < WARMUP; i++) for (const build of builds) await create(build, body);
  const samples = builds.map(() => [] as { ms: number; trips: number }[]);
  for (let i = 0; i < REQUESTS; i++) {
    const order = i % 2 === 0 ? builds.map((_, b) => b) : builds.map((_, b) => builds.length - 1 - b);
    for (const b of order) samples[b]!.push(await create(builds[b]!, body));
  }
  builds.forEach((build, b) => {
    const ms = samples[b]!.map((s) => s.ms).sort((x, y) => x - y);
    const mean = ms.reduce((a, x) => a + x, 0) / ms.length;
    console.log(`| ${kind} | ${build.name} | ${median(samples[b]!.map((s) => s.trips))} | ${fmt(median(ms))} | ${fmt(ms[Math.floor(ms.length * 0.9)]!)} | ${fmt(mean)} |`);
  });
}
for (const build of builds) await build.close();
await database.drop();
