import type { ColumnDefinitionBuilder, CreateTableBuilder, Kysely } from 'kysely';
import type { Dialect } from '../../config.js';

export interface MigrationContext {
  db: Kysely<any>;
  dialect: Dialect;
}

export interface Migration {
  up(ctx: MigrationContext): Promise<void>;
}

/** An insertion-ordered integer key: SQLite rowid alias, PostgreSQL bigserial. Lists sort on it (newest first). */
export function withSeq<T extends string>(table: CreateTableBuilder<T, never>, dialect: Dialect): CreateTableBuilder<T, 'seq'> {
  return dialect === 'sqlite'
    ? table.addColumn('seq', 'integer', (c) => c.primaryKey().autoIncrement())
    : table.addColumn('seq', 'bigserial', (c) => c.primaryKey());
}

export const notNull = (c: ColumnDefinitionBuilder): ColumnDefinitionBuilder => c.notNull();
