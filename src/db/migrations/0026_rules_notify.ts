import { sql } from 'kysely';
import type { Migration } from './helpers.js';

/**
 * PostgreSQL: a change to an organization's assignment rules notifies every instance, as a key or a custom
 * field definition does (migrations 0013, 0019), so lead creates read the rules from a per-process cache
 * (rules.service.ts) instead of one round trip per create. On SQLite migration 0025's triggers move the
 * counter the caches read.
 */
export const rulesNotify: Migration = {
  async up({ db, dialect }) {
    if (dialect !== 'postgres') return;
    await sql`create trigger assignment_rules_changed after insert or update or delete on assignment_rules
      for each statement execute function crm_key_lookup_changed()`.execute(db);
  },
};
