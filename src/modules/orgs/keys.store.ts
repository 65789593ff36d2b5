import type { Executor } from '../../db/database.js';
import { precompile } from '../../db/precompiled.js';
import type { Scope } from './principal.js';

export interface ApiKeyRecord {
  id: string;
  organizationId: string;
  userId: string | null;
  name: string;
  prefix: string;
  scopes: Scope[];
  rateLimitPerMinute: number | null;
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
  createdAt: string;
}

type Row = {
  id: string; organization_id: string; user_id: string | null; name: string; prefix: string; scopes: string;
  rate_limit_per_minute: number | null; expires_at: string | null; revoked_at: string | null; last_used_at: string | null; created_at: string;
};

const COLUMNS = ['id', 'organization_id', 'user_id', 'name', 'prefix', 'scopes', 'rate_limit_per_minute', 'expires_at', 'revoked_at', 'last_used_at', 'created_at'] as const;

const toKey = (r: Row): ApiKeyRecord => ({
  id: r.id,
  organizationId: r.organization_id,
  userId: r.user_id,
  name: r.name,
  prefix: r.prefix,
  scopes: JSON.parse(r.scopes) as Scope[],
  rateLimitPerMinute: r.rate_limit_per_minute,
  expiresAt: r.expires_at,
  revokedAt: r.revoked_at,
  lastUsedAt: r.last_used_at,
  createdAt: r.created_at,
});

export async function insertKey(db: Executor, key: ApiKeyRecord & { hash: string }): Promise<void> {
  await db
    .insertInto('api_keys')
    .values({
      id: key.id,
      organization_id: key.organizationId,
      user_id: key.userId,
      name: key.name,
      prefix: key.prefix,
      key_hash: key.hash,
      scopes: JSON.stringify(key.scopes),
      rate_limit_per_minute: key.rateLimitPerMinute,
      expires_at: key.expiresAt,
      revoked_at: null,
      last_used_at: null,
      created_at: key.createdAt,
    })
    .execute();
}

const selectKeyByHash = precompile((db, hash: string) =>
  db
    .selectFrom('api_keys as k')
    .innerJoin('organizations as o', 'o.id', 'k.organization_id')
    .leftJoin('users as u', 'u.id', 'k.user_id')
    .select(COLUMNS.map((c) => `k.${c}` as const))
    .select(['o.name as org_name', 'o.timezone as org_timezone', 'u.name as user_name', 'u.deactivated_at as user_deactivated_at'])
    .where('k.key_hash', '=', hash),
);

/** The key with its organization and user (and whether that user is deactivated), for authentication: one indexed lookup by hash, on every request. */
export async function findKeyByHash(db: Executor, hash: string) {
  const [row] = await selectKeyByHash(db, hash);
  if (!row) return undefined;
  return { key: toKey(row), organization: { id: row.organization_id, name: row.org_name, timezone: row.org_timezone }, userName: row.user_name, userActive: row.user_deactivated_at === null };
}

export async function listKeys(db: Executor, organizationId: string): Promise<ApiKeyRecord[]> {
  const rows = await db.selectFrom('api_keys').select(COLUMNS).where('organization_id', '=', organizationId).orderBy('created_at', 'desc').execute();
  return rows.map(toKey);
}

export async function findKey(db: Executor, id: string): Promise<ApiKeyRecord | undefined> {
  const row = await db.selectFrom('api_keys').select(COLUMNS).where('id', '=', id).executeTakeFirst();
  return row && toKey(row);
}

export async function revokeKey(db: Executor, id: string, at: string): Promise<boolean> {
  const result = await db.updateTable('api_keys').set({ revoked_at: at }).where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export async function touchKey(db: Executor, id: string, at: string): Promise<void> {
  await db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
}
