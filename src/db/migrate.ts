import { Migrator, sql, type MigrationResultSet } from 'kysely';
import type { Database } from './database.js';
import type { Migration } from './migrations/helpers.js';
import { foundation } from './migrations/0001_foundation.js';
import { accountsDeals } from './migrations/0002_accounts_deals.js';
import { objectsRecords } from './migrations/0003_objects_records.js';
import { webhooks } from './migrations/0004_webhooks.js';
import { adminConsole } from './migrations/0005_admin_console.js';
import { console2 } from './migrations/0007_console2.js';
import { deliveriesIndex } from './migrations/0008_deliveries_index.js';
import { webhookBacklog } from './migrations/0009_webhook_backlog.js';
import { sharedRecordSearch } from './migrations/0010_shared_record_search.js';
import { trash } from './migrations/0011_trash.js';
import { privacy } from './migrations/0012_privacy.js';
import { keyLookupNotify } from './migrations/0013_key_lookup_notify.js';
import { eventFeed } from './migrations/0014_event_feed.js';
import { externalIds } from './migrations/0015_external_ids.js';
import { listKeysets } from './migrations/0016_list_keysets.js';
import { notesTasks } from './migrations/0018_notes_tasks.js';
import { builtinFields } from './migrations/0019_builtin_fields.js';
import { relations } from './migrations/0020_relations.js';
import { attachedLists } from './migrations/0022_attached_lists.js';
import { userDeactivation } from './migrations/0023_user_deactivation.js';
import { itemValuePositions } from './migrations/0024_item_value_positions.js';
import { sqliteCacheVersion } from './migrations/0025_sqlite_cache_version.js';
import { rulesNotify } from './migrations/0026_rules_notify.js';
import { erasedDeals } from './migrations/0027_erased_deals.js';
import { duplicateEventsIndex } from './migrations/0028_duplicate_events_index.js';

/** Numbered and frozen: a migration, once landed, is never edited; changes come as a new number. */
const MIGRATIONS: Record<string, Migration> = {
  '0001_foundation': foundation,
  '0002_accounts_deals': accountsDeals,
  '0003_objects_records': objectsRecords,
  '0004_webhooks': webhooks,
  '0005_admin_console': adminConsole,
  '0007_console2': console2,
  '0008_deliveries_index': deliveriesIndex,
  '0009_webhook_backlog': webhookBacklog,
  '0010_shared_record_search': sharedRecordSearch,
  '0011_trash': trash,
  '0012_privacy': privacy,
  '0013_key_lookup_notify': keyLookupNotify,
  '0014_event_feed': eventFeed,
  '0015_external_ids': externalIds,
  '0016_list_keysets': listKeysets,
  '0018_notes_tasks': notesTasks,
  '0019_builtin_fields': builtinFields,
  '0020_relations': relations,
  '0022_attached_lists': attachedLists,
  '0023_user_deactivation': userDeactivation,
  '0024_item_value_positions': itemValuePositions,
  '0025_sqlite_cache_version': sqliteCacheVersion,
  '0026_rules_notify': rulesNotify,
  '0027_erased_deals': erasedDeals,
  '0028_duplicate_events_index': duplicateEventsIndex,
};

/**
 * Names of migrations already applied to this database (none before the first run). Read outside the
 * migrator so that migrations unknown to this release can be recognized (see below).
 */
async function appliedMigrations(database: Database): Promise<string[]> {
  try {
    const rows = await sql<{ name: string }>`select name from kysely_migration`.execute(database.db);
    return rows.rows.map((r) => r.name);
  } catch {
    return [];
  }
}

/**
 * Applies pending migrations. Kysely's migrator takes a lock (an advisory lock on PostgreSQL), so several
 * instances starting together apply each migration once.
 *
 * During a rolling upgrade an instance of the previous release may restart after a newer one has migrated
 * the database. Migrations are expand-only within a release (docs/operations.md), so the older code still
 * works on the newer schema; it only has to accept that migrations it does not know were applied. Kysely
 * would refuse ("previously executed migration is missing"), so those are listed here as applied no-ops.
 */
export async function migrateToLatest(database: Database): Promise<MigrationResultSet> {
  const applied = await appliedMigrations(database);
  // Nothing to do: no lock either. Kysely's PostgreSQL lock is a session lock, which a pooler in transaction mode
  // (PgBouncer) can leave held on a pooled connection, stalling every instance started after; a restart of
  // instances on a migrated database (the usual case, after `crm migrate`) then never takes it.
  const known = new Set(applied);
  if (Object.keys(MIGRATIONS).every((name) => known.has(name))) return { results: [] };
  const newer = applied.filter((name) => !(name in MIGRATIONS));
  const migrator = new Migrator({
    db: database.db,
    // Branches land migrations with reserved numbers in any order; each still runs exactly once.
    allowUnorderedMigrations: true,
    // Kysely looks for its bookkeeping tables in every schema; with several schemas in one database (one per
    // test file) it must be told which one is this database's, or it finds another's and never creates its own.
    ...(database.schema ? { migrationTableSchema: database.schema } : {}),
    provider: {
      getMigrations: async () => ({
        ...Object.fromEntries(newer.map((name) => [name, { up: async () => undefined }])),
        ...Object.fromEntries(
          Object.entries(MIGRATIONS).map(([name, m]) => [name, { up: (db) => m.up({ db, dialect: database.dialect }) }]),
        ),
      }),
    },
  });
  const result = await migrator.migrateToLatest();
  if (result.error) throw result.error;
  return result;
}
