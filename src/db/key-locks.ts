import { createHash } from 'node:crypto';
import { PostgresAdapter, sql } from 'kysely';
import type { Executor } from './database.js';

/**
 * A value that a write looks for before it writes it: an external id (unique per organization and table,
 * records per object), or a lead's e-mail or phone blind index (duplicate detection). `scope` is where it is
 * unique (an organization, an object), `kind` what it is (`leads.external_id`, `leads.email`).
 */
export interface LockKey {
  scope: string;
  kind: string;
  value: string;
}

/** A key's advisory lock id: the first 64 bits of SHA-256 over its parts (the blind indexes in it are keyed hashes already). */
function lockIdOf(key: LockKey): string {
  return createHash('sha256').update(`${key.scope}\0${key.kind}\0${key.value}`).digest().readBigInt64BE(0).toString();
}

/**
 * Makes the transaction the one writer of these keys until it ends, before it probes them. On PostgreSQL (READ
 * COMMITTED) a probe does not see rows that concurrent transactions inserted and have not committed: eight
 * creates of one new e-mail all found no older lead, two upserts of one new external id both created it (and
 * the second then failed on the unique index). A transaction-scoped advisory lock per key, all in one
 * statement and in key order, so that transactions naming the same keys queue instead of deadlocking; the
 * statements after it see what the previous holder committed. Take them first, before any row lock, and
 * outside savepoints: a rollback to a savepoint releases what was locked in it. `keys` is computed only
 * here. SQLite: nothing to do, its transactions write one at a time (group-commit.ts, write-lock.ts) and
 * probe inside.
 */
export async function lockKeys(db: Executor, keys: () => readonly LockKey[]): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  const ids = [...new Set(keys().map(lockIdOf))];
  if (ids.length === 0) return;
  await sql`select pg_advisory_xact_lock(k) from unnest(${ids}::bigint[]) as k order by k`.execute(db);
}
