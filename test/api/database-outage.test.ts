import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDatabaseUnreachable, openDatabase } from '../../src/db/database.js';
import { buildTestApp, dialect, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';
import { runCli } from '../helpers/cli.js';
import { eventually } from '../helpers/receiver.js';

/**
 * A PostgreSQL restart, a failover or a pooler going away drops the pool's connections. The process must live
 * through it (node-pg reports an idle client's lost connection as an 'error' event, which ends a process that
 * does not listen), answer 503 meanwhile rather than 500, and serve again once connections can be made.
 */
describe.runIf(dialect === 'postgres')('PostgreSQL connections dropped under the API', () => {
  let t: TestApp;
  let s: Seeded;
  beforeAll(async () => {
    t = await buildTestApp();
    s = await seedOrg(t.ctx);
  });
  afterAll(() => t.close());

  it('keeps the process up, answers 503 or 200 (never 500) while the pool reconnects, then serves', async () => {
    expect((await call(t.app, 'GET', '/leads', { auth: s.auth })).status).toBe(200);
    // Every client of the pool (poolSize 5) busy at once: each names its server process.
    const held = await Promise.all(
      Array.from({ length: 5 }, () => sql<{ pid: number }>`select pg_backend_pid() as pid, pg_sleep(0.3)`.execute(t.ctx.database.db)),
    );
    const pids = [...new Set(held.map((r) => r.rows[0]!.pid))];
    expect(pids.length).toBeGreaterThan(1);
    const admin = new pg.Client({ connectionString: t.config.database.url });
    await admin.connect();
    try {
      await admin.query('select pg_terminate_backend(pid) from unnest($1::int[]) as pid', [pids]);
    } finally {
      await admin.end();
    }
    const statuses: number[] = [];
    await eventually(async () => {
      const res = await call(t.app, 'GET', '/leads', { auth: s.auth });
      statuses.push(res.status);
      if (res.status === 503) expect(res.body.error.code).toBe('SERVICE_UNAVAILABLE');
      expect(res.status).toBe(200);
    });
    expect(statuses.filter((status) => status !== 200 && status !== 503)).toEqual([]);
    expect((await call(t.app, 'POST', '/leads', { auth: s.auth, body: { name: 'After The Outage' } })).status).toBe(201);
  });

  it('lives through the connection of a transaction dropped in the middle of its query', async () => {
    // pg-pool takes its listener off a client while it is handed out; node-pg then reports the lost connection
    // both to the query and as an 'error' event of the client, which nothing else hears.
    const uncaught: unknown[] = [];
    const note = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', note);
    const admin = new pg.Client({ connectionString: t.config.database.url });
    await admin.connect();
    try {
      let pid: number | undefined;
      const running = t.ctx.database.transaction(async (trx) => {
        pid = (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)).rows[0]!.pid;
        await sql`select pg_sleep(30)`.execute(trx);
      });
      running.catch(() => undefined);
      await eventually(async () => {
        expect(pid).toBeDefined();
        const { rows } = await admin.query<{ query: string }>(`select query from pg_stat_activity where pid = $1 and state = 'active'`, [pid]);
        expect(rows[0]?.query).toContain('pg_sleep');
      });
      await admin.query('select pg_terminate_backend($1)', [pid]);
      const failure = await running.then(() => undefined, (err: unknown) => err);
      expect(isDatabaseUnreachable(failure)).toBe(true);
      await new Promise((resolve) => setImmediate(resolve));
      expect(uncaught).toEqual([]);
      expect((await call(t.app, 'GET', '/leads', { auth: s.auth })).status).toBe(200);
    } finally {
      process.off('uncaughtException', note);
      await admin.end();
    }
  });
});

describe('isDatabaseUnreachable', () => {
  it('tells a lost or refused connection from other database errors', () => {
    expect(isDatabaseUnreachable(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isDatabaseUnreachable(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }))).toBe(true);
    expect(isDatabaseUnreachable(Object.assign(new Error('connection failure'), { code: '08006' }))).toBe(true);
    expect(isDatabaseUnreachable(new Error('Connection terminated unexpectedly'))).toBe(true);
    expect(isDatabaseUnreachable(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBe(false);
    expect(isDatabaseUnreachable(new Error('something else'))).toBe(false);
    expect(isDatabaseUnreachable(null)).toBe(false);
  });
});

describe('a PostgreSQL server that takes connections and never answers', () => {
  it('fails a query after the connect timeout, as unreachable (503), instead of holding it for ever', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    const database = openDatabase({ dialect: 'postgres', url: `postgres://postgres@127.0.0.1:${port}/crm`, connectTimeoutMs: 300 });
    try {
      const started = Date.now();
      const failure = await sql`select 1`.execute(database.db).then(() => undefined, (err: unknown) => err);
      expect(isDatabaseUnreachable(failure)).toBe(true);
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await database.close();
      sockets.forEach((socket) => socket.destroy());
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});

describe('a command started with a database it cannot reach', () => {
  it('says which setting to check, without its value, and exits 1', async () => {
    const url = 'postgres://someone:s3cret-pass@127.0.0.1:1/crm';
    const result = await runCli(['migrate'], { DATABASE_URL: url, ENCRYPTION_KEY: Buffer.alloc(32, 5).toString('base64') });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('error: the database (DATABASE_URL) is not reachable: connect ECONNREFUSED 127.0.0.1:1');
    expect(result.stderr).not.toContain('s3cret-pass');
  });
});
