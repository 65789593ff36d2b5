import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { dialect } from './test-app.js';

/**
 * A whole database of its own for tests that run `crm` processes (which open DATABASE_URL as production
 * does, without a test schema): a temporary SQLite file, or a fresh PostgreSQL database dropped afterwards.
 */
export async function scratchDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'crm-scratch-'));
    return { url: join(dir, 'crm.db'), drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  const admin = process.env.TEST_DATABASE_URL!;
  const name = `crm_scratch_${randomBytes(5).toString('hex')}`;
  const run = async <R extends pg.QueryResultRow>(query: string, values: unknown[] = []) => {
    const client = new pg.Client({ connectionString: admin });
    await client.connect();
    try {
      return (await client.query<R>(query, values)).rows;
    } finally {
      await client.end();
    }
  };
  const connected = async () => Number((await run<{ n: string }>('select count(*) as n from pg_stat_activity where datname = $1', [name]))[0]?.n ?? 0);
  await run(`create database ${name}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  /**
   * A pool's end() resolves before its clients' sockets are closed: a forced drop right after terminates those
   * backends, and the FATAL error reached a closing client as an uncaught exception (CI, scale-out.test.ts).
   * So the drop waits for the database's connections to leave (a few seconds at most), then forces out the rest.
   */
  const drop = async () => {
    for (const deadline = Date.now() + 10_000; Date.now() < deadline && (await connected()) > 0; ) await new Promise((resolve) => setTimeout(resolve, 50));
    await run(`drop database if exists ${name} with (force)`);
  };
  return { url: url.toString(), drop };
}
