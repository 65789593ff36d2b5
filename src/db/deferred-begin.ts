import type pg from 'pg';

type Query = (config: unknown, values?: unknown, callback?: unknown) => unknown;

/** What node-pg answers a simple-protocol text: one result, or an array of them for several statements. */
type Answer = { command?: string } | { command?: string }[];

const answerOf = (command: string) => ({ command, rowCount: null, rows: [], fields: [] });

/** Whether node-pg sends the query by the simple protocol: a text without parameters (Kysely passes `[]`). */
const isSimple = (config: unknown, values: unknown) => typeof config === 'string' && (values === undefined || (Array.isArray(values) && values.length === 0));

/** A text of several statements answers its last statement's result: Kysely reads one result per query. */
const lastOf = (answer: Answer) => (Array.isArray(answer) ? answer[answer.length - 1] : answer);

/**
 * Makes `client` send a transaction's `begin` together with its first statement: one round trip instead of
 * two for a transaction that starts with a statement without parameters (the key locks of db/key-locks.ts).
 * Kysely's `begin` is answered at once and held back; the next query goes as `begin;` followed by its text
 * when it has no parameters (one simple-protocol message, whose statements PostgreSQL runs one after the
 * other), and after a `begin` of its own otherwise, as before. A `commit` or `rollback` of a transaction that
 * sent nothing sends nothing. A text of several statements answers its last statement's result, the one Kysely
 * reads, with a `begin` in front of it or not.
 *
 * Kysely calls `query(text, parameters)`, and ends every transaction it began with a commit or a rollback,
 * so a connection goes back to the pool owing no `begin`.
 */
export function deferBegin(client: pg.PoolClient): void {
  const query = client.query.bind(client) as Query;
  let owed = false;
  const simple = (text: string) => Promise.resolve(query(text) as Promise<Answer>).then(lastOf);
  (client as unknown as { query: Query }).query = (config, values, callback) => {
    const plain = callback === undefined && isSimple(config, values);
    if (owed) {
      owed = false;
      if (config === 'commit' || config === 'rollback') return Promise.resolve(answerOf(config.toUpperCase()));
      if (plain) return simple(`begin;\n${config as string}`);
      return Promise.resolve(query('begin')).then(() => query(config, values, callback));
    }
    if (config === 'begin' && callback === undefined) {
      owed = true;
      return Promise.resolve(answerOf('BEGIN'));
    }
    return plain ? simple(config as string) : query(config, values, callback);
  };
}
