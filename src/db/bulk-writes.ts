import { sql } from 'kysely';
import type { Database } from './database.js';

/** WAL pages between checkpoints during a bulk write: 40 MB instead of SQLite's default 4 MB. */
const BULK_WAL_AUTOCHECKPOINT = 10_000;

/**
 * Runs a long bulk write (`crm import`) with fewer WAL checkpoints on SQLite: index pages rewritten by
 * consecutive batches are copied into the database file once per 40 MB of WAL rather than after nearly every
 * batch. The setting belongs to this connection only and is restored afterwards, when the WAL is checkpointed
 * as part of the bulk write; durability is unchanged. PostgreSQL needs nothing.
 */
export async function withBulkWrites<T>(database: Database, fn: () => Promise<T>): Promise<T> {
  if (database.dialect !== 'sqlite') return fn();
  const { db } = database;
  const [before] = (await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(db)).rows;
  await sql.raw(`pragma wal_autocheckpoint = ${BULK_WAL_AUTOCHECKPOINT}`).execute(db);
  try {
    return await fn();
  } finally {
    await sql.raw(`pragma wal_autocheckpoint = ${Number(before!.wal_autocheckpoint)}`).execute(db);
    await sql`pragma wal_checkpoint(passive)`.execute(db);
  }
}
