import { Migrator, type MigrationResultSet } from 'kysely';
import type { Database } from './database.js';
import type { Migration } from './migrations/helpers.js';
import { foundation } from './migrations/0001_foundation.js';

/** Numbered and frozen: a migration, once landed, is never edited; changes come as a new number. */
const MIGRATIONS: Record<string, Migration> = {
  '0001_foundation': foundation,
};

/**
 * Applies pending migrations. Kysely's migrator takes a lock (an advisory lock on PostgreSQL), so several
 * instances starting together apply each migration once.
 */
export async function migrateToLatest(database: Database): Promise<MigrationResultSet> {
  const migrator = new Migrator({
    db: database.db,
    // Branches land migrations with reserved numbers in any order; each still runs exactly once.
    allowUnorderedMigrations: true,
    // Kysely looks for its bookkeeping tables in every schema; name ours, or another schema's tables (tests
    // run one schema per file, in parallel) are taken for this one's.
    ...(database.schema ? { migrationTableSchema: database.schema } : {}),
    provider: {
      getMigrations: async () =>
        Object.fromEntries(
          Object.entries(MIGRATIONS).map(([name, m]) => [name, { up: (db) => m.up({ db, dialect: database.dialect }) }]),
        ),
    },
  });
  const result = await migrator.migrateToLatest();
  if (result.error) throw result.error;
  return result;
}
