// The change feed's SQL (GET /events) and the outbox's retention. Positions and their per-dialect order come
// from outbox-order.ts, the same ones the webhook fan-out reads by, so the feed is complete for the same reason.

import { sql, type RawBuilder } from 'kysely';
import type { Dialect } from '../../config.js';
import type { Executor } from '../../db/database.js';
import { AFTER_POSITION, POSITION_ORDER, START_POSITION, TXID_TEXT, VISIBLE_HORIZON, type OutboxPosition } from './outbox-order.js';

export interface FeedRow {
  position: OutboxPosition;
  /** The stored webhook body, byte for byte. */
  payload: string;
}

type Row = {
  seq: number | string | null;
  txid: string | null;
  payload: string | null;
  tail_seq: number | string | null;
  tail_txid: string | null;
  last_seq: number | string | null;
  txid_limit: string;
};

/**
 * One row: the newest event of the whole outbox (every organization and type) that no later commit can precede
 * (a reader that has read every one of its events up to there may move its cursor there), the last `seq` ever
 * drawn and the first transaction id not yet assigned (no cursor handed out goes beyond either).
 */
const TAIL: Record<Dialect, RawBuilder<unknown>> = {
  sqlite: sql`select max(t.seq) as seq, '0' as txid, (select s.seq from sqlite_sequence s where s.name = 'events') as last_seq, '1' as txid_limit from events t`,
  postgres: sql`select x.seq, x.txid, s.last_value as last_seq, pg_snapshot_xmax(pg_current_snapshot())::text as txid_limit from events_seq_seq s left join lateral (
      select t.seq, t.txid::text as txid from events t where ${VISIBLE_HORIZON.postgres('t')} order by t.txid desc, t.seq desc limit 1
    ) x on true`,
};

/** The page's order outside its subquery, where the txid is text. */
const PAGE_ORDER: Record<Dialect, RawBuilder<unknown>> = { sqlite: sql`p.seq`, postgres: sql`p.txid::xid8, p.seq` };

export interface FeedRead {
  rows: FeedRow[];
  /** See TAIL; read in the same statement as the rows, so from the same snapshot. */
  tail: OutboxPosition | undefined;
  lastSeq: number;
  /** Every transaction id drawn so far is below it ('1' on SQLite, whose positions all have txid '0'). */
  txidLimit: string;
}

/** One organization's events after `after` in outbox order; `types` null = every type. */
export async function readFeed(
  db: Executor,
  dialect: Dialect,
  q: { organizationId: string; after: OutboxPosition; types: readonly string[] | null; limit: number },
): Promise<FeedRead> {
  const typeFilter = q.types === null ? sql`` : sql`and e.type in (${sql.join(q.types)})`;
  const { rows } = await sql<Row>`select p.seq, p.txid, p.payload, tail.seq as tail_seq, tail.txid as tail_txid, tail.last_seq, tail.txid_limit
    from (${TAIL[dialect]}) as tail left join (
      select e.seq, ${TXID_TEXT[dialect]('e')} as txid, e.payload from events e
      where e.organization_id = ${q.organizationId} and ${AFTER_POSITION[dialect]('e', q.after)} and ${VISIBLE_HORIZON[dialect]('e')} ${typeFilter}
      order by ${POSITION_ORDER[dialect]('e')} limit ${q.limit}
    ) as p on 1 = 1
    order by ${PAGE_ORDER[dialect]}`.execute(db);
  const first = rows[0];
  return {
    rows: rows.filter((r) => r.payload !== null).map((r) => ({ position: { seq: Number(r.seq), txid: r.txid! }, payload: r.payload! })),
    tail: first?.tail_seq == null ? undefined : { seq: Number(first.tail_seq), txid: first.tail_txid! },
    lastSeq: Number(first?.last_seq ?? 0),
    txidLimit: first!.txid_limit,
  };
}

/** Where retention has deleted up to (webhook_dispatch_state holds the outbox's positions by name). */
const PRUNED = 'feed_pruned';

/** The newest deleted position: a cursor before it has lost events (410 CURSOR_EXPIRED). */
export async function prunedThrough(db: Executor): Promise<OutboxPosition> {
  const row = await db.selectFrom('webhook_dispatch_state').select(['last_seq', 'last_txid']).where('name', '=', PRUNED).executeTakeFirst();
  return row ? { seq: Number(row.last_seq), txid: row.last_txid } : START_POSITION;
}

/**
 * Events the webhook dispatcher no longer needs: the fan-out has passed them, no failing endpoint's deferred
 * backlog starts before them, and no delivery (pending, or finished but still re-sendable from the log) names them.
 */
const PASSED_BY_DISPATCHER: Record<Dialect, ReturnType<typeof sql>> = {
  sqlite: sql`e.seq <= c.last_seq
    and not exists (select 1 from webhook_endpoints w where w.backlog_seq is not null and e.seq > w.backlog_seq)`,
  postgres: sql`(e.txid, e.seq) <= (c.last_txid::xid8, c.last_seq)
    and not exists (select 1 from webhook_endpoints w where w.backlog_seq is not null and (e.txid, e.seq) > (w.backlog_txid::xid8, w.backlog_seq))`,
};

type Candidate = { seq: number | string; txid: string; created_at: string; held: number | boolean };

/**
 * Deletes up to `batch` of the oldest events written before `before`, in outbox order and only as an unbroken
 * prefix (the first event still needed stops it), and moves the pruned-through position with them in the same
 * transaction. Returns how many went.
 */
export async function pruneEventPrefix(trx: Executor, dialect: Dialect, at: { before: string; now: string }, batch: number): Promise<number> {
  const { rows } = await sql<Candidate>`select e.seq, ${TXID_TEXT[dialect]('e')} as txid, e.created_at,
      exists (select 1 from webhook_deliveries d where d.event_id = e.id) as held
    from events e join webhook_dispatch_state c on c.name = 'fanout'
    where ${PASSED_BY_DISPATCHER[dialect]} order by ${POSITION_ORDER[dialect]('e')} limit ${batch}`.execute(trx);
  const stop = rows.findIndex((r) => r.created_at >= at.before || Boolean(Number(r.held)));
  const prefix = stop === -1 ? rows : rows.slice(0, stop);
  const last = prefix.at(-1);
  if (!last) return 0;
  await trx.deleteFrom('events').where('seq', 'in', prefix.map((r) => Number(r.seq))).execute();
  await sql`insert into webhook_dispatch_state (name, last_seq, last_txid, updated_at) values (${PRUNED}, ${Number(last.seq)}, ${last.txid}, ${at.now})
    on conflict (name) do update set last_seq = excluded.last_seq, last_txid = excluded.last_txid, updated_at = excluded.updated_at`.execute(trx);
  return prefix.length;
}
