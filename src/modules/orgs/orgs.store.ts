import type { Executor } from '../../db/database.js';

export interface Organization {
  id: string;
  name: string;
  timezone: string;
  createdAt: string;
  updatedAt: string;
}

const toOrganization = (r: { id: string; name: string; timezone: string; created_at: string; updated_at: string }): Organization => ({
  id: r.id,
  name: r.name,
  timezone: r.timezone,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export async function insertOrganization(db: Executor, org: Organization): Promise<void> {
  await db
    .insertInto('organizations')
    .values({ id: org.id, name: org.name, timezone: org.timezone, created_at: org.createdAt, updated_at: org.updatedAt })
    .execute();
}

export async function findOrganization(db: Executor, id: string): Promise<Organization | undefined> {
  const row = await db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
  return row && toOrganization(row);
}

/** Every organization, oldest first (the operator's `crm org list`). */
export async function listOrganizations(db: Executor): Promise<Organization[]> {
  const rows = await db.selectFrom('organizations').selectAll().orderBy('created_at').orderBy('id').execute();
  return rows.map(toOrganization);
}

export async function updateOrganization(db: Executor, id: string, patch: { name?: string; timezone?: string }, now: string): Promise<void> {
  await db.updateTable('organizations').set({ ...patch, updated_at: now }).where('id', '=', id).execute();
}
