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
  return compiledOnce<A, R>((db) => build(db, ...slots).compile());
}

/**
 * A one-row INSERT of the given columns, compiled once per dialect: the API writes rows one at a time, and
 * building the statement cost more than SQLite executing it. Multi-row inserts (imports) are built as usual.
 */
export function precompileInsert<T extends keyof DB & string>(table: T, columns: readonly (keyof Insertable<DB[T]> & string)[]) {
  const execute = compiledOnce<unknown[], unknown>((db) => oneRowInsert(db, table, columns, 0).compile());
  return async (db: Executor, row: Insertable<DB[T]>): Promise<void> => {
    await execute(db, ...valuesOf(columns, row));
  };
}

/** A one-row insert of `columns` whose values are the arguments from `first` on. */
const oneRowInsert = <T extends keyof DB & string>(db: Kysely<DB>, table: T, columns: readonly string[], first: number) =>
  db.insertInto(table).values(Object.fromEntries(columns.map((c, i) => [c, new Slot(first + i)])) as Insertable<DB[T]>);

const valuesOf = (columns: readonly string[], row: object) => columns.map((c) => (row as Record<string, unknown>)[c]);

/**
 * Two one-row INSERTs that always go together (a row, and the event that records it), compiled once: on
 * PostgreSQL one statement (`with first as (insert …) insert …`), one round trip instead of two — what a
 * write costs the API there is mostly its round trips (docs/performance.md); on SQLite, in-process, the two
 * statements one after the other.
 */
export function precompileInsertPair<T extends keyof DB & string, U extends keyof DB & string>(
  first: { table: T; columns: readonly (keyof Insertable<DB[T]> & string)[] },
  second: { table: U; columns: readonly (keyof Insertable<DB[U]> & string)[] },
) {
  const apart = [precompileInsert(first.table, first.columns), precompileInsert(second.table, second.columns)] as const;
  const together = compiledOnce<unknown[], unknown>((db) => {
    const a = oneRowInsert(db, first.table, first.columns, 0).compile();
    const b = oneRowInsert(db, second.table, second.columns, first.columns.length).compile();
    // Both are numbered from $1; the second's placeholders follow the first's.
    const shifted = b.sql.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + a.parameters.length}`);
    return { ...b, sql: `with "first" as (${a.sql}) ${shifted}`, parameters: [...a.parameters, ...b.parameters] };
  });
  return async (db: Executor, firstRow: Insertable<DB[T]>, secondRow: Insertable<DB[U]>): Promise<void> => {
    if (!(db.getExecutor().adapter instanceof PostgresAdapter)) {
      await apart[0](db, firstRow);
      await apart[1](db, secondRow);
      return;
    }
    await together(db, ...valuesOf(first.columns, firstRow), ...valuesOf(second.columns, secondRow));
  };
}

function compiledOnce<A extends unknown[], R>(compile: (db: Kysely<DB>) => CompiledQuery<R>) {
  const cache = new WeakMap<object, CompiledQuery<R>>();
  return async (db: Executor, ...args: A): Promise<R[]> => {
    const adapterKey = db.getExecutor().adapter as object;
    let compiled = cache.get(adapterKey);
    if (!compiled) {
      compiled = compile(db as Kysely<DB>);
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
