import type { Migration } from './helpers.js';

/**
 * Where a failing endpoint's deferred events begin (dispatcher.work.ts): the outbox position after which its
 * events got no delivery rows yet. Both null while the endpoint gets a row per event. Nullable columns only:
 * an older release ignores them (it would queue every event, as it always did).
 */
export const webhookBacklog: Migration = {
  async up({ db }) {
    await db.schema.alterTable('webhook_endpoints').addColumn('backlog_seq', 'bigint').execute();
    await db.schema.alterTable('webhook_endpoints').addColumn('backlog_txid', 'text').execute();
  },
};
