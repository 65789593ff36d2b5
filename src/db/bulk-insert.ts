import type { CompiledQuery, Insertable, Kysely } from 'kysely';
import type { DB } from './schema.js';
import type { Executor } from './database.js';

/** SQLite allows 32,766 bound values per statement, PostgreSQL 65,535: 500 rows of up to 65 columns fit both. */
const ROWS_PER_STATEMENT = 500;

const compiled = new WeakMap<object, Map<string, CompiledQuery>>();

/** The compiled INSERT of `rows` rows of `columns`, built on first use. */
function insertStatement(db: Executor, table: keyof DB & string, columns: readonly string[], rows: number): CompiledQuery {
  const adapter = db.getExecutor().adapter as object;
  let byShape = compiled.get(adapter);
  if (!byShape) compiled.set(adapter, (byShape = new Map()));
  const key = `${table}(${columns.join(',')})x${rows}`;
  let query = byShape.get(key);
  if (!query) {
    // Each value is its own position, so the check below proves the parameters are row after row, column after column.
    const values = Array.from({ length: rows }, (_, r) => Object.fromEntries(columns.map((c, i) => [c, r * columns.length + i])));
    query = (db as Kysely<DB>).insertInto(table).values(values as never).compile();
    if (!query.parameters.every((p, i) => p === i)) throw new Error(`unexpected parameter order in the bulk insert into ${table}`);
    byShape.set(key, query);
  }
  return query;
}

/**
 * A multi-row INSERT compiled by Kysely once per dialect, table, columns and row count, then executed with
 * fresh values: a bulk write (`crm import`) no longer pays Kysely's query building for every row, which a
 * profile of the import showed costing about as much as SQLite's own insert. Every row must have the same
 * columns (those of the first row), in any order.
 */
export async function insertRows<T extends keyof DB & string>(db: Executor, table: T, rows: readonly Insertable<DB[T]>[]): Promise<void> {
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0]!);
  for (let start = 0; start < rows.length; start += ROWS_PER_STATEMENT) {
    const end = Math.min(rows.length, start + ROWS_PER_STATEMENT);
    const parameters: unknown[] = [];
    for (let r = start; r < end; r++) {
      const row = rows[r] as Record<string, unknown>;
      for (const column of columns) parameters.push(row[column]);
    }
    await db.executeQuery({ ...insertStatement(db, table, columns, end - start), parameters });
  }
}
