// Statements over a variable number of rows (a multi-row INSERT, an UPDATE … FROM (VALUES …), a VALUES list of
// index probes) built and compiled by Kysely once per dialect and chunk size, then executed with fresh values:
// for the dispatcher's small rows and an import's duplicate probes, building the query cost more CPU than
// SQLite's work itself (the idea of precompiled.ts, for many rows). Rows go in chunks of the given sizes (by
// default 64, 8 and 1), so each statement has a few forms, which stay in better-sqlite3's statement cache
// (on PostgreSQL, prepared once per connection: db/named-statements.ts).

import { PostgresAdapter, type Compilable, type CompiledQuery, type Kysely } from 'kysely';
import type { Executor } from './database.js';
import type { DB } from './schema.js';
import { prepareOnConnections } from './named-statements.js';

const DEFAULT_CHUNK_SIZES = [64, 8, 1];

/** Marks where the value of one column of one row goes in a compiled query's parameters. */
class Cell {
  constructor(
    readonly row: number,
    readonly column: string,
  ) {}
}

/** `sizes`: the chunk sizes, largest first, ending with 1; a row holds at most 65,535 / sizes[0] bound values. */
export function compiledForRows<R extends object, O>(
  columns: readonly (keyof R & string)[],
  build: (db: Kysely<DB>, rows: R[]) => Compilable<O>,
  sizes: readonly number[] = DEFAULT_CHUNK_SIZES,
) {
  const cache = new WeakMap<object, Map<number, CompiledQuery<O>>>();
  const compiled = (db: Executor, size: number): CompiledQuery<O> => {
    const adapter = db.getExecutor().adapter as object;
    let bySize = cache.get(adapter);
    if (!bySize) cache.set(adapter, (bySize = new Map()));
    let query = bySize.get(size);
    if (!query) {
      const rows = Array.from({ length: size }, (_, row) => Object.fromEntries(columns.map((c) => [c, new Cell(row, c)])) as R);
      query = build(db as Kysely<DB>, rows).compile();
      bySize.set(size, query);
      if (adapter instanceof PostgresAdapter) prepareOnConnections(query.sql);
    }
    return query;
  };
  return async (db: Executor, rows: readonly R[]): Promise<O[]> => {
    const out: O[] = [];
    let at = 0;
    for (const size of sizes) {
      for (; rows.length - at >= size; at += size) {
        const query = compiled(db, size);
        const from = at;
        const parameters = query.parameters.map((p) => (p instanceof Cell ? (rows[from + p.row] as Record<string, unknown>)[p.column] : p));
        out.push(...(await db.executeQuery<O>({ ...query, parameters })).rows);
      }
    }
    return out;
  };
}
