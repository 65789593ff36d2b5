import { createApiKey, createOrganization, createUser } from '../../src/modules/orgs/orgs.service.js';
import { SCOPES, type Scope } from '../../src/modules/orgs/principal.js';
import type { AppContext } from '../../src/context.js';

export interface Seeded {
  orgId: string;
  userId: string;
  key: string;
  keyId: string;
  auth: { authorization: string };
}

let counter = 0;

/** A fresh organization with one user and a key (all scopes unless narrowed). */
export async function seedOrg(ctx: AppContext, opts: { scopes?: readonly Scope[]; timezone?: string; rateLimitPerMinute?: number } = {}): Promise<Seeded> {
  counter += 1;
  const org = await createOrganization(ctx, { name: `Org ${counter}`, timezone: opts.timezone ?? 'UTC' });
  const user = await createUser(ctx, { organizationId: org.id, email: `owner${counter}.${org.id}@example.com`, name: `Owner ${counter}` });
  const key = await createApiKey(ctx, { organizationId: org.id, userId: user.id, scopes: [...(opts.scopes ?? SCOPES)], name: 'test', rateLimitPerMinute: opts.rateLimitPerMinute ?? null });
  return { orgId: org.id, userId: user.id, key: key.key, keyId: key.id, auth: { authorization: `Bearer ${key.key}` } };
}

export async function addKey(ctx: AppContext, orgId: string, scopes: readonly Scope[], extra: { expiresAt?: string; rateLimitPerMinute?: number } = {}) {
  const key = await createApiKey(ctx, { organizationId: orgId, scopes: [...scopes], ...extra });
  return { key: key.key, keyId: key.id, auth: { authorization: `Bearer ${key.key}` } };
}

export async function addUser(ctx: AppContext, orgId: string, name = 'Rep'): Promise<string> {
  counter += 1;
  return (await createUser(ctx, { organizationId: orgId, email: `rep${counter}.${orgId}@example.com`, name })).id;
}
