import { sql } from 'kysely';
import type { Executor } from './database.js';
import type { TrashTable } from './trash.js';

/** Where an external id is unique: the organization, or for records their object (migration 0015). */
export type ExternalIdScope = { column: 'organization_id' | 'object_id'; value: string };

export interface ExternalIdHolder {
  id: string;
  trashed: boolean;
}

/**
 * The items of `table` within `scope` holding any of `externalIds`, live or trashed, by external id: one
 * lookup of the `<table>_external_id` unique index per value, in one statement.
 */
export async function externalIdHolders(db: Executor, table: TrashTable, scope: ExternalIdScope, externalIds: readonly string[]): Promise<Map<string, ExternalIdHolder>> {
  const wanted = [...new Set(externalIds)];
  if (wanted.length === 0) return new Map();
  const { rows } = await sql<{ id: string; external_id: string; deleted_at: string | null }>`
    select id, external_id, deleted_at from ${sql.table(table)}
    where ${sql.ref(scope.column)} = ${scope.value} and external_id in (${sql.join(wanted)})`.execute(db);
  return new Map(rows.map((r) => [r.external_id, { id: r.id, trashed: r.deleted_at !== null }]));
}
