import { Migrator, type MigrationResultSet } from 'kysely';
import type { Database } from './database.js';
import type { Migration } from './migrations/helpers.js';
import { foundation } from './migrations/0001_foundation.js';
import { accountsDeals } from './migrations/0002_accounts_deals.js';
import { objectsRecords } from './migrations/0003_objects_records.js';

/** Numbered and frozen: a migration, once landed, is never edited; changes come as a new number. */
const MIGRATIONS: Record<string, Migration> = {
  '0001_foundation': foundation,
  '0002_accounts_deals': accountsDeals,
  '0003_objects_records': objectsRecords,
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
    // Kysely looks for its bookkeeping tables in every schema; with several schemas in one database (one per
    // test file) it must be told which one is this database's, or it finds another's and never creates its own.
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
