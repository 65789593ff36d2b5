import type { Executor } from '../../db/database.js';

export async function insertSetupToken(db: Executor, t: { tokenHash: string; organizationId: string; createdAt: string; expiresAt: string }): Promise<void> {
  await db
    .insertInto('admin_setup_tokens')
    .values({ token_hash: t.tokenHash, organization_id: t.organizationId, created_at: t.createdAt, expires_at: t.expiresAt, used_at: null })
    .execute();
}

/** The organization of an unused, unexpired token. */
export async function findUsableSetupToken(db: Executor, tokenHash: string, now: string): Promise<{ organizationId: string; organizationName: string } | undefined> {
  const row = await db
    .selectFrom('admin_setup_tokens as t')
    .innerJoin('organizations as o', 'o.id', 't.organization_id')
    .select(['t.organization_id', 'o.name'])
    .where('t.token_hash', '=', tokenHash)
    .where('t.used_at', 'is', null)
    .where('t.expires_at', '>', now)
    .executeTakeFirst();
  return row && { organizationId: row.organization_id, organizationName: row.name };
}

/** Marks the token used; false when another request used it first (single use, even under concurrency). */
export async function claimSetupToken(db: Executor, tokenHash: string, now: string): Promise<boolean> {
  const result = await db
    .updateTable('admin_setup_tokens')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function releaseSetupToken(db: Executor, tokenHash: string): Promise<void> {
  await db.updateTable('admin_setup_tokens').set({ used_at: null }).where('token_hash', '=', tokenHash).execute();
}
