import { PostgresAdapter, type CompiledQuery, type Compilable, type Insertable, type Kysely } from 'kysely';
import type { DB } from './schema.js';
import type { Executor } from './database.js';
import { readerOf } from './sqlite-reader.js';
import { prepareOnConnections } from './named-statements.js';

/** A stand-in value that marks where the n-th argument goes in a compiled query's parameters. */
class Slot {
  constructor(readonly index: number) {}
}

/**
 * Hot-path queries (authentication, fetch by id, one-row inserts) built and compiled by Kysely once per dialect, then
 * executed with fresh parameters: the SQL text is fixed, only the bound values change. Profiling showed
 * Kysely's per-request query building as ~20% of a GET; this removes it without leaving Kysely. On
 * PostgreSQL the fixed text is also prepared once per connection (db/named-statements.ts).
 */
export function precompile<A extends unknown[], R>(build: (db: Kysely<DB>, ...args: A) => Compilable<R>) {
  const slots = Array.from({ length: build.length - 1 }, (_, i) => new Slot(i)) as unknown as A;
  return compiledOnce<A, R>((db) => build(db, ...slots));
}

/**
 * A one-row INSERT of the given columns, compiled once per dialect: the API writes rows one at a time, and
 * building the statement cost more than SQLite executing it. Multi-row inserts (imports) are built as usual.
 */
export function precompileInsert<T extends keyof DB & string>(table: T, columns: readonly (keyof Insertable<DB[T]> & string)[]) {
  const execute = compiledOnce<unknown[], unknown>((db) =>
    db.insertInto(table).values(Object.fromEntries(columns.map((c, i) => [c, new Slot(i)])) as Insertable<DB[T]>),
  );
  return async (db: Executor, row: Insertable<DB[T]>): Promise<void> => {
    await execute(db, ...columns.map((c) => (row as Record<string, unknown>)[c]));
  };
}

function compiledOnce<A extends unknown[], R>(build: (db: Kysely<DB>) => Compilable<R>) {
  const cache = new WeakMap<object, CompiledQuery<R>>();
  return async (db: Executor, ...args: A): Promise<R[]> => {
    const adapterKey = db.getExecutor().adapter as object;
    let compiled = cache.get(adapterKey);
    if (!compiled) {
      compiled = build(db as Kysely<DB>).compile();
      cache.set(adapterKey, compiled);
      if (adapterKey instanceof PostgresAdapter) prepareOnConnections(compiled.sql);
    }
    const parameters = compiled.parameters.map((p) => (p instanceof Slot ? args[p.index] : p));
    const reader = compiled.query.kind === 'SelectQueryNode' ? readerOf(db) : undefined;
    if (reader) return reader.all(compiled.sql, parameters) as R[];
    const result = await db.executeQuery<R>({ ...compiled, parameters });
    return result.rows;
  };
}
