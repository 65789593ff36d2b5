import { sql } from 'kysely';
import type { Database } from './database.js';

/**
 * SQLite: copies the WAL into the database file and truncates the WAL to zero bytes, so pages written before
 * an erasure (holding the erased values) leave the WAL at once instead of at the next automatic checkpoint,
 * which only rewinds the WAL and leaves old frames on disk until they are overwritten. Returns false when a
 * reader still needed old frames and the WAL could not be emptied (busy_timeout elapsed); the next checkpoint
 * does it. PostgreSQL: nothing to do here (docs/privacy.md).
 */
export async function truncateWal(database: Database): Promise<boolean> {
  if (database.dialect !== 'sqlite') return true;
  const { rows } = await sql<{ busy: number }>`pragma wal_checkpoint(truncate)`.execute(database.db);
  return Number(rows[0]?.busy ?? 0) === 0;
}
