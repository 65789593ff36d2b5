import { setTimeout } from 'node:timers/promises';
import { sql } from 'kysely';
import type { Database } from './database.js';

/** How long truncateWal tries while another checkpoint (the background one, wal-checkpointer.ts) holds the lock. */
const CHECKPOINT_LOCK_WAIT_MS = 5_000;

/**
 * SQLite: copies the WAL into the database file and truncates the WAL to zero bytes, so pages written before
 * an erasure (holding the erased values) leave the WAL at once instead of at the next automatic checkpoint,
 * which only rewinds the WAL and leaves old frames on disk until they are overwritten. A checkpoint running on
 * another connection makes SQLite answer busy at once: it is tried again until that one is over. Returns false
 * when the WAL could still not be emptied (a reader needed old frames past busy_timeout); the next checkpoint
 * does it. PostgreSQL: nothing to do here (docs/privacy.md).
 */
export async function truncateWal(database: Database): Promise<boolean> {
  if (database.dialect !== 'sqlite') return true;
  const deadline = Date.now() + CHECKPOINT_LOCK_WAIT_MS;
  for (;;) {
    const { rows } = await sql<{ busy: number }>`pragma wal_checkpoint(truncate)`.execute(database.db);
    if (Number(rows[0]?.busy ?? 0) === 0) return true;
    if (Date.now() > deadline) return false;
    await setTimeout(10);
  }
}
