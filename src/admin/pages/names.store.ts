import type { Executor } from '../../db/database.js';
import { inView } from '../../db/trash.js';

/** Tables whose live rows the console names in tables and pickers by their `name` column alone (nothing decrypted). */
type NamedTable = 'accounts' | 'leads' | 'deals';

/**
 * The names of the given rows of the organization (one query, however many ids a page shows). Looked up by
 * id alone and checked against the organization here: given both conditions, SQLite walks the
 * (organization_id, seq) index through every row of the organization instead of the unique id index.
 */
export async function namesByIds(db: Executor, table: NamedTable, organizationId: string, ids: readonly (string | null)[]): Promise<Map<string, string>> {
  const wanted = [...new Set(ids.filter((id): id is string => id !== null))];
  if (wanted.length === 0) return new Map();
  const rows = await db.selectFrom(table).select(['id', 'name', 'organization_id']).where('id', 'in', wanted).where(inView(table, 'live')).execute();
  return new Map(rows.filter((r) => r.organization_id === organizationId).map((r) => [r.id, r.name]));
}

/** The newest rows' ids and names, for a picker (bounded: an organization may have 100,000 accounts). */
export async function recentNames(db: Executor, table: NamedTable, organizationId: string, limit: number): Promise<{ id: string; name: string }[]> {
  return db.selectFrom(table).select(['id', 'name']).where('organization_id', '=', organizationId).where(inView(table, 'live')).orderBy('seq', 'desc').limit(limit).execute();
}

/** The organization's custom objects by name, for the navigation (slug and name only, no definitions parsed). */
export async function objectNames(db: Executor, organizationId: string, limit: number): Promise<{ slug: string; name: string }[]> {
  return db.selectFrom('custom_objects').select(['slug', 'name']).where('organization_id', '=', organizationId).orderBy('name').orderBy('slug').limit(limit).execute();
}
