import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { sql } from 'kysely';
import { dialect, type TestApp } from './test-app.js';

/**
 * Everything the database holds, as text: on SQLite the files themselves (main and WAL, free pages
 * included: what a stolen disk would show), on PostgreSQL every row of every table of the schema.
 */
export async function databaseText(t: TestApp): Promise<string> {
  if (dialect === 'sqlite') {
    await sql`pragma wal_checkpoint(passive)`.execute(t.ctx.database.db);
    const dir = dirname(t.location);
    return readdirSync(dir).map((f) => readFileSync(join(dir, f)).toString('latin1')).join('\n');
  }
  return rowsText(t);
}

/** Every live row of every table, as JSON text (what the application can still read). */
export async function rowsText(t: TestApp): Promise<string> {
  const db = t.ctx.database.db;
  const tables =
    dialect === 'sqlite'
      ? (await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(db)).rows.map((r) => r.name)
      : (await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = ${t.location}`.execute(db)).rows.map((r) => r.name);
  const dumps = await Promise.all(tables.map(async (name) => JSON.stringify((await sql`select * from ${sql.table(name)}`.execute(db)).rows)));
  return dumps.join('\n');
}
