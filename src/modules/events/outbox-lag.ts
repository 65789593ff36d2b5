import type { Database } from '../../db/database.js';
import { undispatchedEvents, type Undispatched } from '../webhooks/dispatch-lag.store.js';

export type { Undispatched } from '../webhooks/dispatch-lag.store.js';

/** What GET /metrics reports about the outbox, read at each scrape. */
export interface OutboxProbe {
  /** seq of the newest event (0 before the first): its rate is the event write rate. */
  newestSeq(): Promise<number>;
  /**
   * Events written but not yet handed to webhook delivery. Only a dispatcher can say what "handed over"
   * means (its fan-out cursor), so the webhook module supplies it; without it the gauges are not exported.
   */
  undispatched?(): Promise<Undispatched>;
}

export function outboxProbe({ db, dialect }: Pick<Database, 'db' | 'dialect'>): OutboxProbe {
  return {
    async newestSeq() {
      const row = await db.selectFrom('events').select((eb) => eb.fn.max('seq').as('seq')).executeTakeFirst();
      return Number(row?.seq ?? 0);
    },
    undispatched: () => undispatchedEvents(db, dialect),
  };
}
