import { randomBytes } from 'node:crypto';
import type { AppContext } from '../../context.js';
import type { Config } from '../../config.js';
import { AppError, notFound, validationFailed } from '../../errors.js';
import { hashSecret } from '../../crypto/secrets.js';
import { createUser, newUserErrors, requireOrganization } from '../../modules/orgs/orgs.service.js';
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

/**
 * The setup link, on `baseUrl` when the console is reached through a proxy or a name, else where `crm serve`
 * listens with this same configuration: https when it serves TLS itself (TLS_CERT_FILE), and a loopback
 * address for a wildcard HOST (0.0.0.0, ::), which a browser cannot open.
 */
export function setupLinkUrl(config: Pick<Config, 'host' | 'port' | 'tls'>, token: string, baseUrl?: string): string {
  const host = WILDCARD_HOSTS[config.host] ?? (config.host.includes(':') ? `[${config.host}]` : config.host);
  const base = (baseUrl ?? `${config.tls ? 'https' : 'http'}://${host}:${config.port}`).replace(/\/+$/, '');
  return `${base}/admin/setup?token=${token}`;
}

const WILDCARD_HOSTS: Record<string, string> = { '0.0.0.0': '127.0.0.1', '::': '[::1]' };

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
  // Every mistake at once: a short password and a mismatched confirmation are two things to fix, not one after the other.
  const errors = newUserErrors(input);
  if (input.password !== input.confirmPassword) errors.push({ field: 'confirmPassword', code: 'mismatch', message: 'does not match the password' });
  if (errors.length) throw validationFailed(errors);
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
