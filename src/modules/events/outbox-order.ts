import { sql, type RawBuilder } from 'kysely';
import type { Dialect } from '../../config.js';

/**
 * A position in the outbox, in commit-safe order. SQLite commits one writer at a time, so `seq` alone orders
 * events as they committed (txid is always '0'). PostgreSQL draws `seq` before commit, so a later seq can
 * commit first: positions order by (txid, seq), and a reader only takes events whose transaction is older than
 * every running one (VISIBLE_HORIZON), so nothing can later commit behind a position it has passed.
 * The webhook fan-out cursor and the change feed's cursor are both such positions.
 */
export interface OutboxPosition {
  seq: number;
  txid: string;
}

export const START_POSITION: OutboxPosition = { seq: 0, txid: '0' };

/** `alias`'s event lies after `position`. */
export const AFTER_POSITION: Record<Dialect, (alias: string, position: OutboxPosition) => RawBuilder<boolean>> = {
  sqlite: (alias, p) => sql<boolean>`${sql.ref(`${alias}.seq`)} > ${p.seq}`,
  postgres: (alias, p) => sql<boolean>`(${sql.ref(`${alias}.txid`)}, ${sql.ref(`${alias}.seq`)}) > (${p.txid}::xid8, ${p.seq})`,
};

/**
 * PostgreSQL's horizon: the oldest transaction the statement's snapshot sees running (or, with none, the next
 * id), leaving out those running in another database. Transaction ids are cluster-wide, but only this
 * database's transactions write its outbox, so a long transaction elsewhere on the server must not hold the feed
 * and the fan-out back. A transaction of the snapshot that has ended since is kept in (it may have been ours):
 * that holds the horizon back for one read at most. A backend whose `backend_xid` the role may not see is kept in.
 */
const POSTGRES_HORIZON = sql`coalesce(
  (select min(x) from pg_snapshot_xip(pg_current_snapshot()) as x
    where x::xid not in (select a.backend_xid from pg_stat_activity a
                          where a.backend_xid is not null and a.datname is distinct from current_database())),
  pg_snapshot_xmax(pg_current_snapshot()))`;

/** Only events whose transaction ended before every running one began: none can commit behind them later. */
export const VISIBLE_HORIZON: Record<Dialect, (alias: string) => RawBuilder<boolean>> = {
  sqlite: () => sql<boolean>`1 = 1`,
  postgres: (alias) => sql<boolean>`${sql.ref(`${alias}.txid`)} < ${POSTGRES_HORIZON}`,
};

/** Outbox order (ORDER BY), and the txid column as text ('0' on SQLite). */
export const POSITION_ORDER: Record<Dialect, (alias: string) => RawBuilder<unknown>> = {
  sqlite: (alias) => sql`${sql.ref(`${alias}.seq`)}`,
  postgres: (alias) => sql`${sql.ref(`${alias}.txid`)}, ${sql.ref(`${alias}.seq`)}`,
};

export const TXID_TEXT: Record<Dialect, (alias: string) => RawBuilder<string>> = {
  sqlite: () => sql<string>`'0'`,
  postgres: (alias) => sql<string>`${sql.ref(`${alias}.txid`)}::text`,
};

/** Compares two positions in outbox order (on SQLite every txid is '0', so seq decides). */
export function comparePositions(a: OutboxPosition, b: OutboxPosition): number {
  const ta = BigInt(a.txid);
  const tb = BigInt(b.txid);
  if (ta !== tb) return ta < tb ? -1 : 1;
  return a.seq - b.seq;
}
