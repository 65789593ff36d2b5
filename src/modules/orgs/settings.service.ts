import type { AppContext } from '../../context.js';
import { notFound, validationFailed, type FieldError } from '../../errors.js';
import { isValidTimeZone } from '../../lib/dates.js';
import { findOrganization, updateOrganization, type Organization } from './orgs.store.js';

type Ctx = Pick<AppContext, 'database' | 'clock'>;

/** Renames the organization and/or changes the time zone its due dates and reminders are computed in. */
export async function updateOrganizationSettings(ctx: Ctx, organizationId: string, input: { name: string; timezone: string }): Promise<Organization> {
  const name = input.name.trim();
  const timezone = input.timezone.trim();
  const errors: FieldError[] = [];
  if (!name) errors.push({ field: 'name', code: 'required', message: 'is required' });
  if (name.length > 200) errors.push({ field: 'name', code: 'too_long', message: 'must be at most 200 characters' });
  if (!isValidTimeZone(timezone)) errors.push({ field: 'timezone', code: 'invalid_value', message: 'must be an IANA time zone such as Europe/Paris' });
  if (errors.length) throw validationFailed(errors);
  if (!(await findOrganization(ctx.database.db, organizationId))) throw notFound('Organization', organizationId);
  await updateOrganization(ctx.database.db, organizationId, { name, timezone }, ctx.clock.now().toISOString());
  return (await findOrganization(ctx.database.db, organizationId))!;
}
