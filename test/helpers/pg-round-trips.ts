import pg from 'pg';

/** The change feed's acknowledgment of another process's key sync (src/db/change-feed.ts). */
const isSyncAck = (config: unknown, values: unknown) =>
  config === 'select pg_notify($1, $2)' && Array.isArray(values) && typeof values[1] === 'string' && values[1].startsWith('ack:');

/**
 * `run`'s result, and the PostgreSQL round trips made in this process while it ran, as sent: a simple-protocol
 * message (`Query`) by its text, whitespace folded, and an extended-protocol exchange (Parse/Bind/Execute, ended
 * by the `Sync` whose answer it waits for) as "(extended)". Every connection's, the change feed's included, except
 * its acknowledgments of a key sync: those answer whichever other process revokes a key at that moment (another
 * test file's, in CI), and one once landed in a count.
 */
export async function roundTripsDuring<T>(run: () => Promise<T>): Promise<{ result: T; sent: string[] }> {
  const sent: string[] = [];
  const acks = new WeakSet<object>();
  const { query, sync } = pg.Connection.prototype;
  const clientQuery = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client & { connection: object }, ...args: unknown[]) {
    if (isSyncAck(args[0], args[1])) acks.add(this.connection);
    return (clientQuery as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof clientQuery;
  pg.Connection.prototype.query = function (this: pg.Connection, text: string) {
    sent.push(text.replace(/\s+/g, ' '));
    return query.call(this, text);
  };
  pg.Connection.prototype.sync = function (this: pg.Connection) {
    if (acks.has(this)) acks.delete(this);
    else sent.push('(extended)');
    return sync.call(this);
  };
  try {
    return { result: await run(), sent };
  } finally {
    Object.assign(pg.Connection.prototype, { query, sync });
    pg.Client.prototype.query = clientQuery;
  }
}
