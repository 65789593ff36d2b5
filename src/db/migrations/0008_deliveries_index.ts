import type { Migration } from './helpers.js';

/**
 * Drops `webhook_deliveries_due (due_at, endpoint_id)`: every query for due deliveries names the endpoint and
 * uses `webhook_deliveries_endpoint_due (endpoint_id, due_at)` (one probe per endpoint), so the index was only
 * written — once per delivery row and again at each change of its due time. Older releases never need it.
 */
export const deliveriesIndex: Migration = {
  async up({ db }) {
    await db.schema.dropIndex('webhook_deliveries_due').ifExists().execute();
  },
};
