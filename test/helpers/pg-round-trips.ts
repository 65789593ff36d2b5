import pg from 'pg';

/**
 * `run`'s result, and the PostgreSQL round trips made in this process while it ran, as sent: a simple-protocol
 * message (`Query`) by its text, whitespace folded, and an extended-protocol exchange (Parse/Bind/Execute, ended
 * by the `Sync` whose answer it waits for) as "(extended)". Every connection's, the change feed's included.
 */
export async function roundTripsDuring<T>(run: () => Promise<T>): Promise<{ result: T; sent: string[] }> {
  const sent: string[] = [];
  const { query, sync } = pg.Connection.prototype;
  pg.Connection.prototype.query = function (this: pg.Connection, text: string) {
    sent.push(text.replace(/\s+/g, ' '));
    return query.call(this, text);
  };
  pg.Connection.prototype.sync = function (this: pg.Connection) {
    sent.push('(extended)');
    return sync.call(this);
  };
  try {
    return { result: await run(), sent };
  } finally {
    Object.assign(pg.Connection.prototype, { query, sync });
  }
}
