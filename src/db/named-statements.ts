import type pg from 'pg';

/** SQL text of the hot-path statements (db/precompiled.ts) → the name they are prepared under. */
const names = new Map<string, string>();

/** Marks a fixed SQL text as worth preparing once per PostgreSQL connection (its text never changes). */
export function prepareOnConnections(sql: string): void {
  if (!names.has(sql)) names.set(sql, `crm_${names.size + 1}`);
}

/** "cached plan must not change result type": a migration changed a table under a prepared `select *`. */
const PLAN_CHANGED = '0A000';

type Query = (config: unknown, values?: unknown, callback?: unknown) => unknown;

/**
 * Makes `client` run the registered statements as named prepared statements: PostgreSQL parses and plans
 * each once per connection instead of on every call (node-pg keeps track of what a connection has
 * prepared). Other SQL — lists whose text varies with the filter — is sent unnamed as before.
 *
 * A migration that changes a table's columns while instances run makes PostgreSQL refuse a statement
 * prepared before it; the connection then prepares that statement again under a new name (the old one is
 * left to the connection), and the call is tried once more — which fails as before inside a transaction,
 * where the refusal has already aborted it.
 */
export function useNamedStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as Query;
  let generation = 0;
  const run = (name: string, text: string, values: unknown) => query({ name: `${name}_${generation}`, text, values }) as Promise<unknown>;
  (client as unknown as { query: Query }).query = (config, values, callback) => {
    const name = typeof config === 'string' && callback === undefined ? names.get(config) : undefined;
    if (name === undefined) return query(config, values, callback);
    return run(name, config as string, values).catch((err: { code?: string }) => {
      if (err?.code !== PLAN_CHANGED) throw err;
      generation++;
      return run(name, config as string, values).catch(() => Promise.reject(err));
    });
  };
}
