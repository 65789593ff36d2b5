import { sql, type RawBuilder } from 'kysely';
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
