import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance, RouteOptions } from 'fastify';
import pg from 'pg';
import { Redis } from 'ioredis';
import { inject } from 'vitest';
import { buildApp, type BuildOptions } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { closeContext, createContext, type AppContext } from '../../src/context.js';
import { openDatabase } from '../../src/db/database.js';
import type { Clock } from '../../src/lib/clock.js';
import { RedisRateLimiter } from '../../src/http/rate-limit.js';
import { shareCompiledSchemas } from './compiled-schemas.js';

export const dialect = (process.env.TEST_DIALECT ?? 'sqlite') as 'sqlite' | 'postgres';

export interface TestApp {
  app: FastifyInstance;
  ctx: AppContext;
  config: Config;
  /** SQLite: the database file (for at-rest scans); PostgreSQL: the schema name. */
  location: string;
  close(): Promise<void>;
}

export interface TestAppOptions {
  clock?: Clock;
  env?: Record<string, string>;
  /** Share the rate limit through Redis (TEST_REDIS_URL) under this prefix. */
  redisPrefix?: string;
  /** Reuse the storage of another test app (two instances on one database). */
  sameDatabaseAs?: TestApp;
  /** Extra routes registered before the app is sealed (e.g. one that throws, to test the 500 path). */
  beforeReady?: (app: FastifyInstance) => void;
  /** Sees every route the app registers (route matrices). */
  onRoute?: (route: RouteOptions) => void;
}

const TEST_KEY = randomBytes(32).toString('base64');

/** The advisory lock under which test files migrate their new PostgreSQL schemas, one at a time. */
const MIGRATION_TURN = 0x63726d74; // "crmt"

/**
 * Migrating a new schema takes ~640 locks in one transaction (each table and index it creates), and PostgreSQL's
 * lock table holds max_locks_per_transaction × max_connections of them (6,400 by default) for the whole server:
 * a dozen files migrating at once (this run's workers, and another run on the same server) exhaust it, and the
 * next lock fails with "out of shared memory". Each file's new schema is migrated in its turn, across processes.
 */
async function inMigrationTurn<T>(url: string, migrate: () => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [MIGRATION_TURN]);
    return await migrate();
  } finally {
    await client.end();
  }
}

/** buildApp, with the route schemas compiled once per test worker (compiled-schemas.ts); for a second app on a test app's context. */
export function buildAppWithSharedSchemas(ctx: AppContext, opts: BuildOptions = {}): Promise<FastifyInstance> {
  return buildApp(ctx, {
    ...opts,
    onRoute(this: FastifyInstance, route) {
      shareCompiledSchemas(this, route);
      opts.onRoute?.(route);
    },
  });
}

/** Builds the real app on a fresh database: a temp SQLite file, or a new schema in the run's PostgreSQL database. */
export async function buildTestApp(opts: TestAppOptions = {}): Promise<TestApp> {
  let location: string;
  let url: string;
  let cleanup: () => Promise<void>;
  if (opts.sameDatabaseAs) {
    location = opts.sameDatabaseAs.location;
    url = opts.sameDatabaseAs.config.database.url;
    cleanup = async () => undefined;
  } else if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'crm-test-'));
    location = join(dir, 'crm.db');
    url = location;
    cleanup = async () => rmSync(dir, { recursive: true, force: true });
  } else {
    url = inject('pgRunUrl');
    location = `t_${randomBytes(6).toString('hex')}`;
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`create schema ${location}`);
    await client.end();
    // Schemas are not dropped one by one: Kysely's migrator introspects the tables of every schema, and a
    // schema dropped by another file at that moment fails it ("schema … does not exist"). The whole run's
    // database is dropped by pg-global-setup at the end instead.
    cleanup = async () => undefined;
  }
  const config = loadConfig({ DATABASE_URL: url, ENCRYPTION_KEY: TEST_KEY, LOG_LEVEL: 'silent', ...opts.env }, () => undefined);
  const database = openDatabase({ ...config.database, ...(dialect === 'postgres' ? { schema: location, poolSize: 5 } : {}) });
  const redisUrl = process.env.TEST_REDIS_URL;
  const rateLimiter = opts.redisPrefix && redisUrl ? new RedisRateLimiter(new Redis(redisUrl), `crm-test:${opts.redisPrefix}:`) : undefined;
  const context = () => createContext(config, { database, clock: opts.clock, rateLimiter });
  const ctx = dialect === 'postgres' && !opts.sameDatabaseAs ? await inMigrationTurn(url, context) : await context();
  const app = await buildAppWithSharedSchemas(ctx, { logger: false, ...(opts.onRoute ? { onRoute: opts.onRoute } : {}) });
  opts.beforeReady?.(app);
  await app.ready();
  return {
    app,
    ctx,
    config,
    location,
    close: async () => {
      await app.close();
      await closeContext(ctx);
      await cleanup();
    },
  };
}
