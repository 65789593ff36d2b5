import { createRequire } from 'node:module';
import pg from 'pg';

/** SQL text of the hot-path statements (db/precompiled.ts) → the name they are prepared under. */
const names = new Map<string, string>();

/** Marks a fixed SQL text as worth preparing once per PostgreSQL connection (its text never changes). */
export function prepareOnConnections(sql: string): void {
  if (!names.has(sql)) names.set(sql, `crm_${names.size + 1}`);
}

/** "cached plan must not change result type": a migration changed a table under a prepared `select *`. */
const PLAN_CHANGED = '0A000';

type Query = (config: unknown, values?: unknown, callback?: unknown) => unknown;

/** What node-pg's Result builds from a RowDescription: the columns, their parsers and the empty row. */
interface Described {
  fields: unknown[];
  _parsers: unknown[];
  _prebuiltEmptyResultObject: Record<string, unknown>;
}

/** The node-pg internals this module relies on (pg 8: lib/query.js, lib/result.js). */
interface QueryInternals {
  name: string;
  values: unknown[];
  _result: Described;
  _accumulateRows: boolean;
  handleRowDescription(msg: unknown): void;
  handleError(err: unknown, connection: Connection): void;
  prepare(connection: Connection): void;
}
interface Connection {
  parsedStatements: Record<string, string>;
  bind(opts: { portal: string; statement: string; values: unknown[]; valueMapper: unknown }): void;
  execute(opts: { portal: string; rows?: number }): void;
  sync(): void;
}

/** Per connection, the row description of each statement it has run: they stay valid as long as the statement. */
const descriptions = new WeakMap<Connection, Map<string, Described>>();
/** node-pg's own conversion of a parameter to its wire text, as its Query binds with. */
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as { prepareValue: unknown };

/**
 * A named statement's run that asks for its row description only the first time on a connection. node-pg
 * sends Describe on every run, and parsing the answer (a column list, a parser and an empty row built per
 * column) cost ~7 % of the API's CPU on `GET /leads/{id}` (CPU profile, docs/performance.md). A statement
 * whose result type changes under it (a migration) is refused by PostgreSQL with PLAN_CHANGED rather than
 * answered in another shape, and is then prepared again under a new name, described afresh.
 */
class DescribedOnce extends (pg.Query as unknown as new (config: unknown, values: unknown, callback: unknown) => QueryInternals) {
  private connection: Connection | undefined;

  override prepare(connection: Connection): void {
    const known = connection.parsedStatements[this.name] !== undefined ? descriptions.get(connection)?.get(this.name) : undefined;
    if (known === undefined) {
      this.connection = connection;
      super.prepare(connection);
      return;
    }
    this._result.fields = known.fields;
    this._result._parsers = known._parsers;
    this._result._prebuiltEmptyResultObject = known._prebuiltEmptyResultObject;
    this._accumulateRows = true;
    try {
      connection.bind({ portal: '', statement: this.name, values: this.values, valueMapper: prepareValue });
    } catch (err) {
      // A value node-pg can't convert (as its own prepare does: nothing was sent; the statement stays prepared).
      connection.sync();
      this.handleError(err, connection);
      return;
    }
    connection.execute({ portal: '' });
    connection.sync();
  }

  override handleRowDescription(msg: unknown): void {
    super.handleRowDescription(msg);
    if (this.connection === undefined) return;
    let described = descriptions.get(this.connection);
    if (described === undefined) descriptions.set(this.connection, (described = new Map()));
    const { fields, _parsers, _prebuiltEmptyResultObject } = this._result;
    described.set(this.name, { fields, _parsers, _prebuiltEmptyResultObject });
  }
}

/**
 * Makes `client` run the registered statements as named prepared statements: PostgreSQL parses and plans
 * each once per connection instead of on every call (node-pg keeps track of what a connection has
 * prepared), and describes its result once (DescribedOnce). Other SQL — lists whose text varies with the
 * filter — is sent unnamed as before.
 *
 * A migration that changes a table's columns while instances run makes PostgreSQL refuse a statement
 * prepared before it; the connection then prepares that statement again under a new name (the old one is
 * left to the connection), and the call is tried once more — which fails as before inside a transaction,
 * where the refusal has already aborted it.
 */
export function useNamedStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as Query;
  let generation = 0;
  const run = (name: string, text: string, values: unknown) =>
    new Promise((resolve, reject) => {
      query(new DescribedOnce({ name: `${name}_${generation}`, text, values }, undefined, (err: unknown, result: unknown) => (err ? reject(err) : resolve(result))));
    });
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
