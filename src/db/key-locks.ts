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
 * The statement that locks the keys, their ids inlined (numbers computed here from the keys, never a caller's
 * text): a text without parameters goes by the simple protocol, so the transaction's `begin` goes in front of it
 * in the same round trip (db/deferred-begin.ts). Undefined for no key.
 */
function lockStatement(keys: readonly LockKey[]): string | undefined {
  const ids = [...new Set(keys.map(lockIdOf))];
  return ids.length === 0 ? undefined : `select pg_advisory_xact_lock(k) from unnest('{${ids.join(',')}}'::bigint[]) as k order by k`;
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
  const statement = db.getExecutor().adapter instanceof PostgresAdapter ? lockStatement(keys()) : undefined;
  if (statement !== undefined) await sql.raw(statement).execute(db);
}
