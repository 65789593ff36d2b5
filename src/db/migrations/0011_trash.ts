import { sql } from 'kysely';
import type { Migration } from './helpers.js';

/** The tables whose rows can be trashed, and the list indexes each needs for its live rows. */
const LIVE_INDEXES: Record<string, readonly (readonly string[])[]> = {
  leads: [['organization_id', 'seq']],
  accounts: [['organization_id', 'seq']],
  deals: [['organization_id', 'seq'], ['organization_id', 'stage', 'seq'], ['organization_id', 'account_id', 'seq'], ['organization_id', 'owner_id', 'seq']],
  records: [['object_id', 'seq'], ['object_id', 'stage', 'seq'], ['object_id', 'due_date']],
};

/** What scopes a trash list: the organization, or for records the object (resolved within the organization). */
const TRASH_SCOPE: Record<string, string> = { leads: 'organization_id', accounts: 'organization_id', deals: 'organization_id', records: 'object_id' };

/**
 * Trash (contract §7): `deleted_at` on leads, accounts, deals and records, null while the row is live.
 *
 * Every list counts its total from a narrow index without reading rows; with "deleted_at is null" in the
 * query, the existing indexes no longer answer it alone, so each list index gets a partial twin over live rows
 * (`<table>_live_<columns>`, `where deleted_at is null`). The trash gets a partial index over trashed rows only
 * (`<table>_trash`, scope then deletion time): it costs nothing on inserts and serves both the trash list
 * (newest deletion first) and the scheduler's purge. Exact e-mail/phone lookups and duplicate probes keep the
 * (bidx, seq) indexes: they read the row anyway (its organization), where the trash check is free.
 *
 * Expand only (docs/operations.md): the previous release names `leads_org_seq` and `accounts_org_seq` in
 * `indexed by`, and lists with the full-table indexes, so they all stay until the next release drops them.
 */
export const trash: Migration = {
  async up({ db }) {
    for (const [table, indexes] of Object.entries(LIVE_INDEXES)) {
      await db.schema.alterTable(table).addColumn('deleted_at', 'text').execute();
      for (const columns of indexes) {
        const name = `${table}_live_${columns.map((c) => c.replace(/_id$/, '')).join('_')}`;
        await db.schema.createIndex(name).on(table).columns([...columns]).where(sql.ref('deleted_at'), 'is', null).execute();
      }
      await db.schema
        .createIndex(`${table}_trash`)
        .on(table)
        .columns([TRASH_SCOPE[table]!, 'deleted_at'])
        .where(sql.ref('deleted_at'), 'is not', null)
        .execute();
    }
  },
};
