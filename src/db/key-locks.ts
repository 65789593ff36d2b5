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

/** How many advisory locks the keys of one scope and kind share (a power of two). */
export const LOCKS_PER_KIND = 256;

/**
 * A key's advisory lock id: 64 bits, the first 56 of SHA-256 over its scope and kind, the last 8 from its value
 * (the blind indexes in it are keyed hashes already). Keys of one scope and kind share LOCKS_PER_KIND locks, so a
 * transaction writing many keys (an import of 10,000 leads: 30,000 e-mails, phones and external ids) holds at most
 * 256 of each kind: every lock held takes a slot of PostgreSQL's lock table until the transaction ends, and that
 * table holds max_locks_per_transaction × max_connections (6,400 by default) for the whole server. Two writers of
 * different keys that share a lock only queue, briefly; two of one key always do.
 */
function lockIdOf(key: LockKey): bigint {
  const kind = createHash('sha256').update(`${key.scope}\0${key.kind}`).digest().readBigInt64BE(0);
  const value = BigInt(createHash('sha256').update(key.value).digest()[0]! & (LOCKS_PER_KIND - 1));
  return (kind & ~BigInt(LOCKS_PER_KIND - 1)) | value;
}

/**
 * The statement that locks the keys, their ids inlined (numbers computed here from the keys, never a caller's
 * text): a text without parameters goes by the simple protocol, so the transaction's `begin` goes in front of it
 * in the same round trip (db/deferred-begin.ts). Undefined for no key.
 */
function lockStatement(keys: readonly LockKey[]): string | undefined {
  const ids = [...new Set(keys.map((k) => lockIdOf(k).toString()))];
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
