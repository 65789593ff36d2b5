import { randomBytes } from 'node:crypto';
import type { AppContext } from '../../context.js';
import { AppError, notFound, validationFailed } from '../../errors.js';
import { hashSecret } from '../../crypto/secrets.js';
import { createUser, requireOrganization } from '../../modules/orgs/orgs.service.js';
import { countAdmins } from '../../modules/orgs/users.store.js';
import { claimSetupToken, findUsableSetupToken, insertSetupToken, releaseSetupToken } from './setup.store.js';

type Ctx = Pick<AppContext, 'database' | 'cipher' | 'blindIndex' | 'clock'>;

export const SETUP_TOKEN_TTL_MS = 24 * 3_600_000;

/**
 * First-run setup: an operator with shell access runs `crm admin setup-link --org O` and opens the printed
 * link. The token (256 random bits, stored hashed) works once, for 24 hours, and only while the organization
 * has no administrator, so an exposed console can't be claimed by whoever finds it first.
 */
export async function createSetupToken(ctx: Ctx, organizationId: string): Promise<{ token: string; expiresAt: string }> {
  await requireOrganization(ctx, organizationId);
  if ((await countAdmins(ctx.database.db, organizationId)) > 0) {
    throw new AppError('CONFLICT', 'This organization already has an administrator; create more with `crm user create --admin` or in the console');
  }
  const now = ctx.clock.now();
  const token = randomBytes(32).toString('base64url');
  const expiresAt = new Date(now.getTime() + SETUP_TOKEN_TTL_MS).toISOString();
  await insertSetupToken(ctx.database.db, { tokenHash: hashSecret(token), organizationId, createdAt: now.toISOString(), expiresAt });
  return { token, expiresAt };
}

/** The organization a setup link opens, or null when the link is unknown, used, expired or no longer needed. */
export async function checkSetupToken(ctx: Ctx, token: string): Promise<{ organizationId: string; organizationName: string } | null> {
  const found = await findUsableSetupToken(ctx.database.db, hashSecret(token), ctx.clock.now().toISOString());
  if (!found || (await countAdmins(ctx.database.db, found.organizationId)) > 0) return null;
  return found;
}

export interface SetupInput {
  name: string;
  email: string;
  password: string;
  confirmPassword: string;
}

/** Creates the organization's first administrator and spends the token. */
export async function completeSetup(ctx: Ctx, token: string, input: SetupInput): Promise<{ userId: string; organizationId: string }> {
  const target = await checkSetupToken(ctx, token);
  if (!target) throw notFound('Setup link');
  if (input.password !== input.confirmPassword) {
    throw validationFailed([{ field: 'confirmPassword', code: 'mismatch', message: 'does not match the password' }]);
  }
  const tokenHash = hashSecret(token);
  if (!(await claimSetupToken(ctx.database.db, tokenHash, ctx.clock.now().toISOString()))) throw notFound('Setup link');
  try {
    const user = await createUser(ctx, { organizationId: target.organizationId, name: input.name, email: input.email, password: input.password, admin: true });
    return { userId: user.id, organizationId: target.organizationId };
  } catch (err) {
    await releaseSetupToken(ctx.database.db, tokenHash);
    throw err;
  }
}
