import type { Migration } from './helpers.js';

/**
 * An erasure also removes the deals holding the value in a custom e-mail or phone field (contract §9): its receipt
 * counts them. Receipts written before this migration erased no deal, so they read 0.
 */
export const erasedDeals: Migration = {
  async up({ db }) {
    await db.schema.alterTable('privacy_erasures').addColumn('matched_deals', 'integer', (c) => c.notNull().defaultTo(0)).execute();
  },
};
