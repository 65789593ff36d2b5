import { randomBytes } from 'node:crypto';
import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/database.js';
import { notFound } from '../../errors.js';
import { hashSecret } from '../../crypto/secrets.js';
import { newId } from '../../lib/ids.js';
import { findUser } from '../../modules/orgs/users.store.js';
import type { Viewer } from '../module.js';
import {
  countLiveSessions,
  deleteExpiredSessions,
  deleteSession,
  deleteUserSessions,
  findLiveSession,
  insertSession,
  listLiveSessions,
  replaceSessionToken,
  touchSession,
  type StoredSession,
} from './sessions.store.js';

type Ctx = Pick<AppContext, 'database' | 'clock'>;

/** A session ends after 12 hours without a request, and 7 days after sign-in whatever the activity. */
export const IDLE_TIMEOUT_MS = 12 * 3_600_000;
export const ABSOLUTE_TIMEOUT_MS = 7 * 86_400_000;
/** The sliding expiry is written at most once a minute per session, so page views stay reads. */
const TOUCH_INTERVAL_MS = 60_000;
const MAX_USER_AGENT = 300;

/** 256 random bits for the cookie; the database holds only its SHA-256, so a leaked table opens no session. */
function newSecrets(): { token: string; tokenHash: string; csrfToken: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, tokenHash: hashSecret(token), csrfToken: randomBytes(32).toString('base64url') };
}

export async function startSession(
  ctx: Ctx,
  input: { userId: string; organizationId: string; ip: string; userAgent: string },
): Promise<{ token: string; session: StoredSession }> {
  const now = ctx.clock.now();
  const { token, tokenHash, csrfToken } = newSecrets();
  const session: StoredSession = {
    id: newId(now),
    tokenHash,
    userId: input.userId,
    organizationId: input.organizationId,
    csrfToken,
    ip: input.ip,
    userAgent: input.userAgent.slice(0, MAX_USER_AGENT),
    createdAt: now.toISOString(),
    lastSeenAt: now.toISOString(),
    expiresAt: new Date(now.getTime() + IDLE_TIMEOUT_MS).toISOString(),
    absoluteExpiresAt: new Date(now.getTime() + ABSOLUTE_TIMEOUT_MS).toISOString(),
  };
  await deleteExpiredSessions(ctx.database.db, input.userId, session.createdAt);
  await insertSession(ctx.database.db, session);
  return { token, session };
}

/** The viewer a session cookie stands for, or null when unknown, expired or revoked; slides the idle expiry. */
export async function resumeSession(ctx: Ctx, token: string): Promise<Viewer | null> {
  const now = ctx.clock.now();
  const found = await findLiveSession(ctx.database.db, hashSecret(token), now.toISOString());
  if (!found) return null;
  const { session } = found;
  if (new Date(session.lastSeenAt).getTime() + TOUCH_INTERVAL_MS <= now.getTime()) {
    await touchSession(ctx.database.db, session.id, now.toISOString(), new Date(now.getTime() + IDLE_TIMEOUT_MS).toISOString());
  }
  return { user: found.user, organization: found.organization, session: { id: session.id, csrfToken: session.csrfToken } };
}

/**
 * The same session under a new cookie and CSRF token (after a password change), so whoever holds a copy of
 * the old cookie is signed out while the user stays signed in. Null when the session no longer exists.
 */
export async function renewSessionToken(db: Executor, sessionId: string): Promise<string | null> {
  const { token, tokenHash, csrfToken } = newSecrets();
  return (await replaceSessionToken(db, sessionId, tokenHash, csrfToken)) ? token : null;
}

export async function endSession(ctx: Ctx, viewer: Viewer): Promise<void> {
  await deleteSession(ctx.database.db, viewer.user.id, viewer.session.id);
}

export async function listOwnSessions(ctx: Ctx, viewer: Viewer): Promise<StoredSession[]> {
  return listLiveSessions(ctx.database.db, viewer.user.id, ctx.clock.now().toISOString());
}

/** A user revokes one of their own sessions; another user's session id is "not found". */
export async function revokeOwnSession(ctx: Ctx, viewer: Viewer, sessionId: string): Promise<void> {
  if (!(await deleteSession(ctx.database.db, viewer.user.id, sessionId))) throw notFound('Session');
}

/**
 * Signs a user of the organization out everywhere (an administrator's action), or everywhere else
 * (`keepId`: the caller's own session). A user of another organization is "not found".
 */
export async function revokeUserSessions(ctx: Ctx, organizationId: string, userId: string, keepId?: string): Promise<number> {
  if (!(await findUser(ctx.database.db, organizationId, userId))) throw notFound('User');
  return deleteUserSessions(ctx.database.db, organizationId, userId, keepId);
}

export async function liveSessionCounts(ctx: Ctx, organizationId: string): Promise<Map<string, number>> {
  return countLiveSessions(ctx.database.db, organizationId, ctx.clock.now().toISOString());
}
