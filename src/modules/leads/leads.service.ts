import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/database.js';
import { notFound, validationFailed, type FieldError } from '../../errors.js';
import { newId } from '../../lib/ids.js';
import { paginate } from '../../lib/pagination.js';
import { normalizeContacts, openContact, sealContacts } from '../../crypto/contact-fields.js';
import { buildEvent, diffChanges } from '../events/events.js';
import { recordEvent } from '../events/outbox.store.js';
import { assignOwner } from '../orgs/rules.service.js';
import { existingUserIds } from '../orgs/users.store.js';
import type { Caller } from '../shared/caller.js';
import { existingAccountIds } from '../accounts/accounts.store.js';
import { contactFilter } from '../shared/contact-query.js';
import { findLead, findOldestDuplicate, insertLead, listLeads as listStored, updateLead as updateStored, type StoredLead } from './leads.store.js';
import type { CreateLeadBody, Lead, ListLeadsQuery, UpdateLeadBody } from './leads.schemas.js';

type Ctx = Pick<AppContext, 'database' | 'cipher' | 'blindIndex' | 'clock'>;
// Re-exported for modules written against the leads service before Caller moved to shared/.
export type { Caller };

const TABLE = 'leads';
const EVENT_FIELDS = ['name', 'email', 'phoneNumber', 'source', 'sourceCampaign', 'status', 'company', 'title', 'notes', 'ownerId', 'accountId', 'duplicateOf'] as const;
const CONTACT_FIELDS = ['email', 'phoneNumber'];

function toLead(ctx: Ctx, s: StoredLead): Lead {
  const where = { table: TABLE, rowId: s.id };
  return {
    id: s.id,
    name: s.name,
    email: openContact(ctx, 'email', where, s.emailEnc),
    phoneNumber: openContact(ctx, 'phone', where, s.phoneEnc),
    source: s.source,
    sourceCampaign: s.sourceCampaign,
    status: s.status,
    company: s.company,
    title: s.title,
    notes: s.notes,
    ownerId: s.ownerId,
    accountId: s.accountId,
    duplicateOf: s.duplicateOf,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
  };
}

/** Checks that the owner and account a lead refers to belong to the caller's organization, reporting both at once. */
async function checkReferences(db: Executor, organizationId: string, refs: { ownerId?: string | null; accountId?: string | null }): Promise<void> {
  const errors: FieldError[] = [];
  if (refs.ownerId) {
    const known = await existingUserIds(db, organizationId, [refs.ownerId]);
    if (!known.has(refs.ownerId)) errors.push({ field: 'ownerId', code: 'not_found', message: 'is not a user of this organization' });
  }
  if (refs.accountId) {
    const known = await existingAccountIds(db, organizationId, [refs.accountId]);
    if (!known.has(refs.accountId)) errors.push({ field: 'accountId', code: 'not_found', message: 'is not an account of this organization' });
  }
  if (errors.length) throw validationFailed(errors);
}

function seal(ctx: Ctx, id: string, organizationId: string, contacts: { email?: string | null; phoneNumber?: string | null }) {
  return sealContacts(ctx, { table: TABLE, rowId: id, organizationId }, contacts);
}

/**
 * Stores the lead, runs the organization's assignment rules (unless an owner was given), then records
 * lead.created — all in the caller's transaction, so the event always carries the assigned owner.
 */
export async function createLead(ctx: Ctx, trx: Executor, caller: Caller, input: CreateLeadBody): Promise<Lead> {
  const contacts = normalizeContacts(input);
  await checkReferences(trx, caller.organizationId, { ownerId: input.ownerId, accountId: input.accountId });
  const now = ctx.clock.now();
  const id = newId(now);
  const sealed = seal(ctx, id, caller.organizationId, contacts);
  const source = input.source ?? null;
  const sourceCampaign = input.sourceCampaign ?? null;
  const stored: Omit<StoredLead, 'seq'> = {
    id,
    organizationId: caller.organizationId,
    name: input.name.trim(),
    ...sealed,
    source,
    sourceCampaign,
    status: input.status ?? 'NEW',
    company: input.company ?? null,
    title: input.title ?? null,
    notes: input.notes ?? null,
    ownerId: input.ownerId ?? null,
    accountId: input.accountId ?? null,
    duplicateOf: await findOldestDuplicate(trx, caller.organizationId, sealed),
    createdAt: now.toISOString(),
    updatedAt: now.toISOString(),
  };
  await insertLead(trx, stored);
  if (stored.ownerId === null) {
    stored.ownerId = await assignOwner(trx, caller.organizationId, { source, sourceCampaign });
    if (stored.ownerId !== null) await updateStored(trx, { ...stored, seq: 0 });
  }
  const lead = toLead(ctx, { ...stored, seq: 0 });
  await recordEvent(
    trx,
    buildEvent({
      type: 'lead.created',
      organizationId: caller.organizationId,
      object: 'lead',
      objectId: id,
      description: 'Lead created',
      changes: diffChanges(null, lead, EVENT_FIELDS, CONTACT_FIELDS),
      actor: caller.actor,
      now,
    }),
  );
  return lead;
}

export async function getLead(ctx: Ctx, organizationId: string, id: string): Promise<Lead> {
  const stored = await findLead(ctx.database.db, organizationId, id);
  if (!stored) throw notFound('Lead', id);
  return toLead(ctx, stored);
}

export async function listLeads(ctx: Ctx, organizationId: string, query: ListLeadsQuery) {
  const page = { page: query.page, limit: query.limit };
  const { leads, total } = await listStored(ctx.database.db, ctx.database.dialect, organizationId, contactFilter(ctx.blindIndex, organizationId, query.q), page);
  return { leads: leads.map((l) => toLead(ctx, l)), pagination: paginate(page, total) };
}

/** Applies the sent fields; records lead.updated with only what changed (no event when nothing did). */
export async function updateLead(ctx: Ctx, trx: Executor, caller: Caller, id: string, patch: UpdateLeadBody): Promise<Lead> {
  const current = await findLead(trx, caller.organizationId, id);
  if (!current) throw notFound('Lead', id);
  const contacts = normalizeContacts(patch);
  await checkReferences(trx, caller.organizationId, { ownerId: patch.ownerId, accountId: patch.accountId });
  const before = toLead(ctx, current);
  const merged = { ...before, ...patch, ...contacts, name: patch.name?.trim() ?? before.name };
  const contactChanged = merged.email !== before.email || merged.phoneNumber !== before.phoneNumber;
  const sealed = contactChanged
    ? seal(ctx, id, caller.organizationId, merged)
    : { emailEnc: current.emailEnc, emailBidx: current.emailBidx, phoneEnc: current.phoneEnc, phoneBidx: current.phoneBidx };
  const next: StoredLead = {
    ...current,
    ...sealed,
    name: merged.name,
    source: merged.source,
    sourceCampaign: merged.sourceCampaign,
    status: merged.status,
    company: merged.company,
    title: merged.title,
    notes: merged.notes,
    ownerId: merged.ownerId,
    accountId: merged.accountId,
    duplicateOf: contactChanged ? await findOldestDuplicate(trx, caller.organizationId, sealed, current.seq) : current.duplicateOf,
  };
  const after = toLead(ctx, next);
  const changes = diffChanges(before, after, EVENT_FIELDS, CONTACT_FIELDS);
  if (Object.keys(changes.after).length === 0) return before;
  const now = ctx.clock.now();
  next.updatedAt = now.toISOString();
  await updateStored(trx, next);
  await recordEvent(
    trx,
    buildEvent({
      type: 'lead.updated',
      organizationId: caller.organizationId,
      object: 'lead',
      objectId: id,
      description: `Lead updated: ${Object.keys(changes.after).join(', ')}`,
      changes,
      actor: caller.actor,
      now,
    }),
  );
  return { ...after, updatedAt: next.updatedAt };
}
