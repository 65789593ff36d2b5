import type { Executor } from '../../db/database.js';

export interface StoredSession {
  id: string;
  tokenHash: string;
  userId: string;
  organizationId: string;
  csrfToken: string;
  ip: string;
  userAgent: string;
  createdAt: string;
  lastSeenAt: string;
  expiresAt: string;
  absoluteExpiresAt: string;
}

/** A session with the user and organization it belongs to, as one indexed lookup per console request. */
export interface ResolvedSession {
  session: StoredSession;
  user: { id: string; name: string; isAdmin: boolean };
  organization: { id: string; name: string; timezone: string };
}

type Row = {
  id: string; token_hash: string; user_id: string; organization_id: string; csrf_token: string; ip: string; user_agent: string;
  created_at: string; last_seen_at: string; expires_at: string; absolute_expires_at: string;
};

const COLUMNS = ['id', 'token_hash', 'user_id', 'organization_id', 'csrf_token', 'ip', 'user_agent', 'created_at', 'last_seen_at', 'expires_at', 'absolute_expires_at'] as const;

const toSession = (r: Row): StoredSession => ({
  id: r.id,
  tokenHash: r.token_hash,
  userId: r.user_id,
  organizationId: r.organization_id,
  csrfToken: r.csrf_token,
  ip: r.ip,
  userAgent: r.user_agent,
  createdAt: r.created_at,
  lastSeenAt: r.last_seen_at,
  expiresAt: r.expires_at,
  absoluteExpiresAt: r.absolute_expires_at,
});

export async function insertSession(db: Executor, s: StoredSession): Promise<void> {
  await db
    .insertInto('admin_sessions')
    .values({
      id: s.id,
      token_hash: s.tokenHash,
      user_id: s.userId,
      organization_id: s.organizationId,
      csrf_token: s.csrfToken,
      ip: s.ip,
      user_agent: s.userAgent,
      created_at: s.createdAt,
      last_seen_at: s.lastSeenAt,
      expires_at: s.expiresAt,
      absolute_expires_at: s.absoluteExpiresAt,
    })
    .execute();
}

/** The unexpired session whose cookie hashes to `tokenHash`, with its user and organization. */
export async function findLiveSession(db: Executor, tokenHash: string, now: string): Promise<ResolvedSession | undefined> {
  const row = await db
    .selectFrom('admin_sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .innerJoin('organizations as o', 'o.id', 's.organization_id')
    .select(COLUMNS.map((c) => `s.${c}` as const))
    .select(['u.name as user_name', 'u.is_admin as user_is_admin', 'o.name as org_name', 'o.timezone as org_timezone'])
    .where('s.token_hash', '=', tokenHash)
    .where('u.deactivated_at', 'is', null)
    .where('s.expires_at', '>', now)
    .where('s.absolute_expires_at', '>', now)
    .executeTakeFirst();
  if (!row) return undefined;
  return {
    session: toSession(row),
    user: { id: row.user_id, name: row.user_name, isAdmin: Number(row.user_is_admin) === 1 },
    organization: { id: row.organization_id, name: row.org_name, timezone: row.org_timezone },
  };
}

export async function touchSession(db: Executor, id: string, lastSeenAt: string, expiresAt: string): Promise<void> {
  await db.updateTable('admin_sessions').set({ last_seen_at: lastSeenAt, expires_at: expiresAt }).where('id', '=', id).execute();
}

export async function listLiveSessions(db: Executor, userId: string, now: string): Promise<StoredSession[]> {
  const rows = await db
    .selectFrom('admin_sessions')
    .select(COLUMNS)
    .where('user_id', '=', userId)
    .where('expires_at', '>', now)
    .where('absolute_expires_at', '>', now)
    .orderBy('last_seen_at', 'desc')
    .execute();
  return rows.map(toSession);
}

/** Gives a session a new cookie and CSRF token, keeping everything else (a copy of the old cookie stops working). */
export async function replaceSessionToken(db: Executor, id: string, tokenHash: string, csrfToken: string): Promise<boolean> {
  const result = await db.updateTable('admin_sessions').set({ token_hash: tokenHash, csrf_token: csrfToken }).where('id', '=', id).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Deletes one session of the user (false when it isn't theirs or no longer exists). */
export async function deleteSession(db: Executor, userId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('admin_sessions').where('user_id', '=', userId).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

/** Deletes every session of a user of the organization, except `keepId` (the caller's own, when given). */
export async function deleteUserSessions(db: Executor, organizationId: string, userId: string, keepId?: string): Promise<number> {
  const result = await db
    .deleteFrom('admin_sessions')
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .$if(keepId !== undefined, (q) => q.where('id', '!=', keepId!))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Housekeeping at sign-in: a user's expired sessions go, so the table holds live sessions only. */
export async function deleteExpiredSessions(db: Executor, userId: string, now: string): Promise<void> {
  await db
    .deleteFrom('admin_sessions')
    .where('user_id', '=', userId)
    .where((eb) => eb.or([eb('expires_at', '<=', now), eb('absolute_expires_at', '<=', now)]))
    .execute();
}

/** Live sessions per user of the organization (the Users page). */
export async function countLiveSessions(db: Executor, organizationId: string, now: string): Promise<Map<string, number>> {
  const rows = await db
    .selectFrom('admin_sessions')
    .select(['user_id', (eb) => eb.fn.countAll<number>().as('n')])
    .where('organization_id', '=', organizationId)
    .where('expires_at', '>', now)
    .where('absolute_expires_at', '>', now)
    .groupBy('user_id')
    .execute();
  return new Map(rows.map((r) => [r.user_id, Number(r.n)]));
}
