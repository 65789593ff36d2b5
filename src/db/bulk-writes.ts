import { sql } from 'kysely';
import type { Database } from './database.js';

/** WAL pages between checkpoints during a bulk write: 40 MB instead of SQLite's default 4 MB. */
const BULK_WAL_AUTOCHECKPOINT = 10_000;

/**
 * Runs a long bulk write (`crm import`) with SQLite settings suited to it, restored afterwards: statement
 * journals in memory rather than in temporary files (every multi-row INSERT opens one), and fewer WAL
 * checkpoints, so index pages rewritten by consecutive batches are copied into the database file once rather
 * than once per batch; the WAL is checkpointed at the end. Both settings belong to this connection only;
 * durability is unchanged. PostgreSQL needs none.
 */
export async function withBulkWrites<T>(database: Database, fn: () => Promise<T>): Promise<T> {
  if (database.dialect !== 'sqlite') return fn();
  const { db } = database;
  const [tempStore] = (await sql<{ temp_store: number }>`pragma temp_store`.execute(db)).rows;
  const [autocheckpoint] = (await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(db)).rows;
  await sql`pragma temp_store = memory`.execute(db);
  await sql.raw(`pragma wal_autocheckpoint = ${BULK_WAL_AUTOCHECKPOINT}`).execute(db);
  try {
    return await fn();
  } finally {
    await sql.raw(`pragma temp_store = ${Number(tempStore!.temp_store)}`).execute(db);
    await sql.raw(`pragma wal_autocheckpoint = ${Number(autocheckpoint!.wal_autocheckpoint)}`).execute(db);
    // The WAL left behind is checkpointed here, as part of the bulk write, not by the next writer.
    await sql`pragma wal_checkpoint(passive)`.execute(db);
  }
}
