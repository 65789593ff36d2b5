import type { Migration } from './helpers.js';

/**
 * Users can be deactivated (contract §9 `active`): `deactivated_at` is the time an administrator did it, null
 * while the user is active. A deactivated user can't sign in, their API keys stop authenticating and they can't
 * be given work. On PostgreSQL the users trigger of migration 0013 already notifies the key lookup caches.
 */
export const userDeactivation: Migration = {
  async up({ db }) {
    await db.schema.alterTable('users').addColumn('deactivated_at', 'text').execute();
  },
};
