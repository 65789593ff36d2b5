import { sql } from 'kysely';
import type { Migration } from './helpers.js';

/** The tables that take an `externalId`, and what its uniqueness is scoped to (records: their object). */
const SCOPES: Record<string, string> = { leads: 'organization_id', accounts: 'organization_id', deals: 'organization_id', records: 'object_id' };

/**
 * External ids (contract §8): the integrator's own key of a lead, account, deal or record, unique per
 * organization (records: per object) among live and trashed rows alike, so that a trashed item can be
 * restored without a clash. A partial unique index over the rows that have one: it is the lookup of
 * `?externalId=` and of upserts, costs nothing for rows without one, and settles two concurrent creates of
 * one external id on PostgreSQL (the loser's insert fails, answered 409 EXTERNAL_ID_TAKEN).
 */
export const externalIds: Migration = {
  async up({ db }) {
    for (const [table, scope] of Object.entries(SCOPES)) {
      await db.schema.alterTable(table).addColumn('external_id', 'text').execute();
      await db.schema
        .createIndex(`${table}_external_id`)
        .on(table)
        .columns([scope, 'external_id'])
        .unique()
        .where(sql.ref('external_id'), 'is not', null)
        .execute();
    }
  },
};
