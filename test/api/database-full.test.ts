import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDatabaseBusy, isDatabaseOutOfResources } from '../../src/db/database.js';
import { buildTestApp, dialect, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';

/**
 * SQLite refuses a write for a reason that is not the request's, and says so with a retryable 503 in the one
 * envelope, never a 500: the database is full (a full disk; here SQLite's `max_page_count`, which fails the same
 * way, SQLITE_FULL), or another process holds the write lock past busy_timeout (an `--all-or-nothing` import of a
 * large file, a hand-run transaction). Nothing of the request is stored, and it goes through once the cause is gone.
 */
describe.runIf(dialect === 'sqlite')('SQLite refusing a write (full, or locked by another writer)', () => {
  let t: TestApp;
  let s: Seeded;
  beforeAll(async () => {
    t = await buildTestApp();
    s = await seedOrg(t.ctx);
  });
  afterAll(() => t.close());

  const pageCount = async () => Number((await sql<{ page_count: number }>`pragma page_count`.execute(t.ctx.database.db)).rows[0]!.page_count);
  const batch = { items: Array.from({ length: 100 }, (_, i) => ({ name: `Roomless ${i}`, email: `roomless${i}@example.com`, notes: 'n'.repeat(2_000) })) };

  it('answers 503 with Retry-After and stores nothing, then takes the same batch once there is room', async () => {
    await sql.raw(`pragma max_page_count = ${(await pageCount()) + 4}`).execute(t.ctx.database.db);
    try {
      const refused = await call(t.app, 'POST', '/leads/batch', { auth: s.auth, body: batch });
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toBe('30');
      expect(refused.body).toMatchObject({ status: false, code: 'SERVICE_UNAVAILABLE' });
      expect(refused.body.message).toContain('out of disk space');
    } finally {
      await sql.raw('pragma max_page_count = 4294967294').execute(t.ctx.database.db);
    }
    const listed = await call(t.app, 'GET', `/leads?q=${encodeURIComponent('Roomless')}`, { auth: s.auth });
    expect(listed.body.data.leads).toEqual([]);
    const taken = await call(t.app, 'POST', '/leads/batch', { auth: s.auth, body: batch });
    expect(taken.status).toBe(200);
    expect(taken.body.data.results.map((r: { status: number }) => r.status)).toEqual(Array(100).fill(201));
  });

  it('answers 503 with Retry-After while the lock is held, and writes once it is released', async () => {
    const other = new SqliteDatabase(t.location);
    // The API's wait is shortened for the test (5 s otherwise); the other writer holds the lock past it.
    await sql`pragma busy_timeout = 200`.execute(t.ctx.database.db);
    try {
      other.exec('begin immediate');
      const refused = await call(t.app, 'POST', '/leads', { auth: s.auth, body: { name: 'Waited Too Long' } });
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toBe('1');
      expect(refused.body).toMatchObject({ status: false, code: 'SERVICE_UNAVAILABLE' });
      expect(refused.body.message).toContain('busy with another writer');
      other.exec('rollback');
      expect((await call(t.app, 'POST', '/leads', { auth: s.auth, body: { name: 'Waited Enough' } })).status).toBe(201);
    } finally {
      if (other.inTransaction) other.exec('rollback');
      other.close();
      await sql`pragma busy_timeout = 5000`.execute(t.ctx.database.db);
    }
  });
});

describe('isDatabaseBusy', () => {
  it('tells a database locked by another writer from other errors', () => {
    expect(isDatabaseBusy(Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }))).toBe(true);
    expect(isDatabaseBusy(Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY_SNAPSHOT' }))).toBe(true);
    expect(isDatabaseBusy(Object.assign(new Error('database table is locked'), { code: 'SQLITE_LOCKED' }))).toBe(true);
    expect(isDatabaseBusy(Object.assign(new Error('could not obtain lock'), { code: '55P03' }))).toBe(true);
    expect(isDatabaseBusy(Object.assign(new Error('deadlock detected'), { code: '40P01' }))).toBe(true);
    expect(isDatabaseBusy(Object.assign(new Error('could not serialize access'), { code: '40001' }))).toBe(true);
    expect(isDatabaseBusy(Object.assign(new Error('SQLITE_BUSYNESS'), { code: 'SQLITE_BUSYNESS' }))).toBe(false);
    expect(isDatabaseBusy(Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }))).toBe(false);
    expect(isDatabaseBusy(new Error('something else'))).toBe(false);
  });
});

describe('isDatabaseOutOfResources', () => {
  it('tells a database short of room, memory or connections from other errors', () => {
    expect(isDatabaseOutOfResources(Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }))).toBe(true);
    expect(isDatabaseOutOfResources(Object.assign(new Error('could not extend file'), { code: '53100' }))).toBe(true);
    expect(isDatabaseOutOfResources(Object.assign(new Error('sorry, too many clients already'), { code: '53300' }))).toBe(true);
    expect(isDatabaseOutOfResources(Object.assign(new Error('out of memory'), { code: '53200' }))).toBe(true);
    expect(isDatabaseOutOfResources(Object.assign(new Error('duplicate key'), { code: '23505' }))).toBe(false);
    expect(isDatabaseOutOfResources(Object.assign(new Error('busy'), { code: 'SQLITE_BUSY' }))).toBe(false);
    expect(isDatabaseOutOfResources(new Error('something else'))).toBe(false);
    expect(isDatabaseOutOfResources(null)).toBe(false);
  });
});
