import { sql } from 'kysely';
import type { Dialect } from '../../config.js';
import type { Executor } from '../../db/database.js';

/** Events written but not yet handed to webhook delivery (GET /metrics, through the outbox probe). */
export interface Undispatched {
  count: number;
  /** When the oldest undispatched event was written; null when there is none. */
  oldestCreatedAt: string | null;
}

/**
 * Events the fan-out has not yet turned into deliveries: those past the dispatcher's cursor, in the same
 * order the dispatcher reads them (seq on SQLite, (txid, seq) on PostgreSQL; see dispatcher.store.ts).
 */
const BEHIND_CURSOR: Record<Dialect, ReturnType<typeof sql>> = {
  sqlite: sql`e.seq > c.last_seq`,
  postgres: sql`(e.txid, e.seq) > (c.last_txid::xid8, c.last_seq)`,
};

export async function undispatchedEvents(db: Executor, dialect: Dialect): Promise<Undispatched> {
  const row = await sql<{ n: number | string; oldest: string | null }>`select count(*) as n, min(e.created_at) as oldest
    from events e join webhook_dispatch_state c on c.name = 'fanout' where ${BEHIND_CURSOR[dialect]}`.execute(db);
  return { count: Number(row.rows[0]?.n ?? 0), oldestCreatedAt: row.rows[0]?.oldest ?? null };
}
