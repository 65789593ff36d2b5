import type { AppContext } from '../../context.js';
import { notFound, validationFailed, type FieldError } from '../../errors.js';
import { isValidTimeZone } from '../../lib/dates.js';
import { replanOrganizationReminders } from '../objects/reminders.service.js';
import { findOrganization, updateOrganization, type Organization } from './orgs.store.js';

type Ctx = Pick<AppContext, 'database' | 'clock'>;

/**
 * Renames the organization and/or changes the time zone its overdue checks and reminders use. A new time
 * zone re-plans every reminder that has not fired yet, in the same transaction as the change.
 */
export async function updateOrganizationSettings(ctx: Ctx, organizationId: string, input: { name?: string; timezone?: string }): Promise<Organization> {
  const name = input.name?.trim();
  const timezone = input.timezone?.trim();
  const errors: FieldError[] = [];
  if (name !== undefined && name === '') errors.push({ field: 'name', code: 'required', message: 'is required' });
  if (name !== undefined && name.length > 200) errors.push({ field: 'name', code: 'too_long', message: 'must be at most 200 characters' });
  if (timezone !== undefined && !isValidTimeZone(timezone)) errors.push({ field: 'timezone', code: 'invalid_value', message: 'must be an IANA time zone such as Europe/Paris' });
  if (errors.length) throw validationFailed(errors);
  const updated = await ctx.database.db.transaction().execute(async (trx) => {
    const current = await findOrganization(trx, organizationId);
    if (!current) throw notFound('Organization');
    const patch = { ...(name !== undefined ? { name } : {}), ...(timezone !== undefined ? { timezone } : {}) };
    const now = ctx.clock.now();
    await updateOrganization(trx, organizationId, patch, now.toISOString());
    if (timezone !== undefined && timezone !== current.timezone) await replanOrganizationReminders(trx, organizationId, timezone, now);
    return { ...current, ...patch, updatedAt: now.toISOString() };
  });
  // Keys are authenticated from a cache that carries the organization's name and time zone (overdue checks
  // read it): on PostgreSQL, wait until every instance has dropped it, as a key revocation does.
  await ctx.database.changesSeen?.();
  return updated;
}
