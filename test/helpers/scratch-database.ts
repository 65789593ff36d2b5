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
  const run = async (query: string) => {
    const client = new pg.Client({ connectionString: admin });
    await client.connect();
    try {
      await client.query(query);
    } finally {
      await client.end();
    }
  };
  await run(`create database ${name}`);
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => run(`drop database if exists ${name} with (force)`) };
}
