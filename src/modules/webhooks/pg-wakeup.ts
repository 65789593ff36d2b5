// Cross-process wake-up on PostgreSQL: API instances running without a dispatcher (DISPATCHER=off) NOTIFY
// after their commits, and `crm worker` processes LISTEN, so scale-out keeps commit-to-delivery latency
// close to the in-process path. Only a hint: workers still poll, so a lost notification delays, never loses.

import { sql } from 'kysely';
import pg from 'pg';
import type { AppContext } from '../../context.js';

export const OUTBOX_CHANNEL = 'crm_outbox';

interface Log {
  warn(obj: object, msg: string): void;
}

/** After each commit that wrote events, one NOTIFY; commits that land meanwhile share the next one. */
export function publishCommits(ctx: Pick<AppContext, 'database' | 'outbox'>, log: Log): () => void {
  let sending = false;
  let again = false;
  const send = async () => {
    sending = true;
    do {
      again = false;
      try {
        await sql`select pg_notify(${OUTBOX_CHANNEL}, '')`.execute(ctx.database.db);
      } catch (err) {
        log.warn({ err }, 'outbox NOTIFY failed; workers will find the events at their next poll');
      }
    } while (again);
    sending = false;
  };
  return ctx.outbox.subscribe(() => {
    if (sending) again = true;
    else void send();
  });
}

/** A dedicated connection LISTENing for commits; reconnects after a second when it drops. */
export async function listenForCommits(url: string, onCommit: () => void, log: Log): Promise<{ close(): Promise<void> }> {
  let client: pg.Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  const connect = async (): Promise<void> => {
    const c = new pg.Client({ connectionString: url });
    c.on('notification', () => onCommit());
    c.on('error', (err) => {
      log.warn({ err }, 'outbox LISTEN connection lost; reconnecting');
      void c.end().catch(() => undefined);
      if (!closed) retry = setTimeout(() => void connect().catch(() => undefined), 1_000);
    });
    await c.connect();
    await c.query(`listen ${OUTBOX_CHANNEL}`);
    client = c;
    // Events committed while we were not listening.
    onCommit();
  };
  await connect();
  return {
    close: async () => {
      closed = true;
      clearTimeout(retry);
      await client?.end().catch(() => undefined);
    },
  };
}
