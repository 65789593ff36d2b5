import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrate.js';
import { buildTestApp, dialect, type TestApp } from '../helpers/test-app.js';

/** Kysely's migration lock on PostgreSQL (its postgres-adapter.js): a session-level advisory lock. */
const KYSELY_MIGRATION_LOCK = '3853314791062309107';

/**
 * Through PgBouncer in transaction mode that session lock can stay held on a pooled connection (docs/scaling.md);
 * an instance starting on a database that needs no migration must not wait for it.
 */
describe.runIf(dialect === 'postgres')('starting on a migrated database', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildTestApp();
  });
  afterAll(() => t.close());

  it('applies nothing and takes no migration lock, so a lock left held elsewhere does not stall it', async () => {
    const holder = new pg.Client({ connectionString: t.config.database.url });
    await holder.connect();
    try {
      await holder.query('select pg_advisory_lock($1::bigint)', [KYSELY_MIGRATION_LOCK]);
      const result = await Promise.race([
        migrateToLatest(t.ctx.database),
        new Promise<'stalled'>((resolve) => setTimeout(() => resolve('stalled'), 20_000).unref()),
      ]);
      expect(result).toEqual({ results: [] });
    } finally {
      await holder.end();
    }
  }, 60_000);
});
