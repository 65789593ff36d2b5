import type { AppContext } from '../../context.js';
import { AppError, notFound, validationFailed, type FieldError } from '../../errors.js';
import { newId } from '../../lib/ids.js';
import { isEmail, normalizeEmail } from '../../lib/contact.js';
import { isValidTimeZone } from '../../lib/dates.js';
import { generateApiKey, hashSecret, looksLikeApiKey } from '../../crypto/secrets.js';
import { hashPassword } from '../../crypto/password.js';
import { contactAad } from '../../crypto/contact-fields.js';
import { findOrganization, insertOrganization, type Organization } from './orgs.store.js';
import { insertUser, findUser, findUserByEmailIndex } from './users.store.js';
import { passwordErrors } from './users.service.js';
import { findKey, findKeyByHash, insertKey, revokeKey, touchKey, type ApiKeyRecord } from './keys.store.js';
import { isScope, type Principal, type Scope } from './principal.js';
import { KeyLookupCache } from './key-lookup-cache.js';

type Ctx = Pick<AppContext, 'database' | 'cipher' | 'blindIndex' | 'clock'>;

export async function createOrganization(ctx: Ctx, input: { name: string; timezone?: string }): Promise<Organization> {
  const timezone = input.timezone ?? 'UTC';
  const errors = [];
  if (!input.name.trim()) errors.push({ field: 'name', code: 'required', message: 'is required' });
  if (!isValidTimeZone(timezone)) errors.push({ field: 'timezone', code: 'invalid_value', message: 'must be an IANA time zone such as Europe/Paris' });
  if (errors.length) throw validationFailed(errors);
  const now = ctx.clock.now().toISOString();
  const org: Organization = { id: newId(), name: input.name.trim(), timezone, createdAt: now, updatedAt: now };
  await insertOrganization(ctx.database.db, org);
  return org;
}

export async function requireOrganization(ctx: Ctx, id: string): Promise<Organization> {
  const org = await findOrganization(ctx.database.db, id);
  if (!org) throw notFound('Organization');
  return org;
}

/** Users' e-mails are contact data too: encrypted, with a deployment-wide blind index (one account per e-mail). */
export function userEmailIndex(ctx: Pick<Ctx, 'blindIndex'>, email: string): string {
  return ctx.blindIndex.compute('email', 'users', normalizeEmail(email));
}

/** What is wrong with a new user's name, e-mail and password, all at once (forms check more beside it). */
export function newUserErrors(input: { email: string; name: string; password?: string }): FieldError[] {
  const errors: FieldError[] = [];
  if (!input.name.trim()) errors.push({ field: 'name', code: 'required', message: 'is required' });
  if (input.name.trim().length > 200) errors.push({ field: 'name', code: 'too_long', message: 'must be at most 200 characters' });
  if (!isEmail(input.email)) errors.push({ field: 'email', code: 'invalid_format', message: 'must be a valid e-mail address' });
  if (input.password !== undefined) errors.push(...passwordErrors('password', input.password));
  return errors;
}

export async function createUser(
  ctx: Ctx,
  input: { organizationId: string; email: string; name: string; password?: string; admin?: boolean },
): Promise<{ id: string }> {
  await requireOrganization(ctx, input.organizationId);
  const errors = newUserErrors(input);
  if (errors.length) throw validationFailed(errors);
  const emailBidx = userEmailIndex(ctx, input.email);
  if (await findUserByEmailIndex(ctx.database.db, emailBidx)) {
    throw new AppError('CONFLICT', 'A user with this e-mail already exists');
  }
  const id = newId();
  const now = ctx.clock.now().toISOString();
  await insertUser(ctx.database.db, {
    id,
    organizationId: input.organizationId,
    name: input.name.trim(),
    emailEnc: ctx.cipher.encrypt(normalizeEmail(input.email), contactAad('users', id, 'email')),
    emailBidx,
    passwordHash: input.password === undefined ? null : await hashPassword(input.password),
    isAdmin: input.admin === true,
    deactivatedAt: null,
    createdAt: now,
    updatedAt: now,
  });
  return { id };
}

export interface NewKeyInput {
  organizationId: string;
  userId?: string | null;
  name?: string;
  scopes: string[];
  expiresAt?: string | null;
  rateLimitPerMinute?: number | null;
}

/** Creates a key; the full key is returned here once and only its hash is stored. */
export async function createApiKey(ctx: Ctx, input: NewKeyInput): Promise<{ id: string; key: string; record: ApiKeyRecord }> {
  await requireOrganization(ctx, input.organizationId);
  const unknown = input.scopes.filter((s) => !isScope(s));
  if (unknown.length || input.scopes.length === 0) {
    throw validationFailed([{ field: 'scopes', code: 'invalid_value', message: unknown.length ? `unknown scopes: ${unknown.join(', ')}` : 'at least one scope is required' }]);
  }
  const now = ctx.clock.now();
  if (input.expiresAt && new Date(input.expiresAt).getTime() <= now.getTime()) {
    throw validationFailed([{ field: 'expiresAt', code: 'out_of_range', message: 'must be in the future' }]);
  }
  // A key acts for a user of its own organization: another's would tie the key to that organization's admin actions.
  if (input.userId) {
    const user = await findUser(ctx.database.db, input.organizationId, input.userId);
    if (!user) throw validationFailed([{ field: 'userId', code: 'not_found', message: `user ${input.userId} is not in this organization` }]);
    if (user.deactivatedAt) throw validationFailed([{ field: 'userId', code: 'invalid_value', message: `user ${input.userId} is deactivated` }]);
  }
  const { key, prefix, hash } = generateApiKey();
  const record: ApiKeyRecord = {
    id: newId(now),
    organizationId: input.organizationId,
    userId: input.userId ?? null,
    name: input.name?.trim() || 'API key',
    prefix,
    scopes: [...new Set(input.scopes)] as Scope[],
    rateLimitPerMinute: input.rateLimitPerMinute ?? null,
    expiresAt: input.expiresAt ?? null,
    revokedAt: null,
    lastUsedAt: null,
    createdAt: now.toISOString(),
  };
  await insertKey(ctx.database.db, { ...record, hash });
  return { id: record.id, key, record };
}

/**
 * Revocation takes effect on the next request, in every instance: the authenticators' caches empty on the
 * change (KeyLookupCache), and on PostgreSQL this waits until the change's notification has gone round.
 */
export async function revokeApiKey(ctx: Ctx, id: string, organizationId?: string): Promise<void> {
  const key = await findKey(ctx.database.db, id);
  if (!key || (organizationId !== undefined && key.organizationId !== organizationId)) throw notFound('API key');
  await revokeKey(ctx.database.db, id, ctx.clock.now().toISOString());
  await ctx.database.changesSeen?.();
}

/** last_used_at is written at most once a minute per key per process, so reads stay reads. */
const TOUCH_INTERVAL_MS = 60_000;

export function createAuthenticator(ctx: Ctx) {
  const touched = new Map<string, number>();
  const keys = new KeyLookupCache<NonNullable<Awaited<ReturnType<typeof findKeyByHash>>>>(ctx.database);
  return async function authenticate(token: string): Promise<Principal | null> {
    if (!looksLikeApiKey(token)) return null;
    const hash = hashSecret(token);
    const found = await keys.lookup(hash, () => findKeyByHash(ctx.database.db, hash));
    const now = ctx.clock.now();
    // A deactivated user's keys answer like revoked ones until the user is reactivated.
    if (!found || found.key.revokedAt !== null || !found.userActive) return null;
    if (found.key.expiresAt !== null && new Date(found.key.expiresAt).getTime() <= now.getTime()) return null;
    const { key } = found;
    if ((touched.get(key.id) ?? 0) + TOUCH_INTERVAL_MS <= now.getTime()) {
      touched.set(key.id, now.getTime());
      await touchKey(ctx.database.db, key.id, now.toISOString());
    }
    return {
      organization: found.organization,
      key: { id: key.id, name: key.name, prefix: key.prefix, scopes: key.scopes, expiresAt: key.expiresAt, rateLimitPerMinute: key.rateLimitPerMinute },
      user: key.userId && found.userName !== null ? { id: key.userId, name: found.userName } : null,
      actor: { type: 'API_KEY', id: key.id, channel: 'API' },
    };
  };
}
