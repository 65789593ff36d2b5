import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { Dialect } from '../config.js';

/**
 * One value of a JSON text column, per dialect: SQLite's json_extract gives numbers as numbers, PostgreSQL's
 * ->> gives text, cast for numbers. Keys are field keys (`^[a-z][a-zA-Z0-9_]*$`), quoted all the same.
 */
export function jsonField(dialect: Dialect, column: string, key: string, kind: 'number' | 'text'): RawBuilder<unknown> {
  if (dialect === 'sqlite') return sql`json_extract(${sql.ref(column)}, ${`$."${key}"`})`;
  const text = sql`(${sql.ref(column)}::jsonb ->> ${key})`;
  return kind === 'number' ? sql`${text}::double precision` : text;
}

/** Whether the JSON array of strings in a text column holds any of `values` (a webhook endpoint's `events`). */
export function jsonArrayHasAny(dialect: Dialect, column: string, values: readonly string[]): RawBuilder<SqlBool> {
  const list = sql.join(values.map((v) => sql`${v}`));
  if (dialect === 'sqlite') return sql<SqlBool>`exists (select 1 from json_each(${sql.ref(column)}) where value in (${list}))`;
  return sql<SqlBool>`exists (select 1 from jsonb_array_elements_text(${sql.ref(column)}::jsonb) as element(value) where element.value in (${list}))`;
}
