import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/database.js';
import { notFound, validationFailed, type FieldError } from '../../errors.js';
import { listRequest } from '../../lib/list-request.js';
import { listCursors } from '../../crypto/list-cursors.js';
import { normalizeContacts, openContact, sealContacts } from '../../crypto/contact-fields.js';
import { buildEvent, diffChanges, ENCRYPTED, type Changes } from '../events/events.js';
import { recordEvent, recordEvents } from '../events/outbox.store.js';
import { assignOwners, cachedRules } from '../orgs/rules.service.js';
import type { AssignmentRule } from '../orgs/rules.schemas.js';
import { activeUserIds } from '../orgs/users.store.js';
import type { Caller } from '../shared/caller.js';
import { existingAccountIds } from '../accounts/accounts.store.js';
import { contactFilter } from '../shared/contact-query.js';
import { externalIdHolders } from '../../db/external-ids.js';
import { lockKeys, type LockKey } from '../../db/key-locks.js';
import { normalizeEmail, normalizePhone } from '../../lib/contact.js';
import { externalIdKeys } from '../shared/external-id.js';
import { findContactMatches, findLead, findOldestDuplicate, insertLeads, insertLeadWithEvent, listLeads as listStored, updateLead as updateStored, type StoredLead } from './leads.store.js';
import type { CreateLeadBody, Lead, ListLeadsQuery, UpdateLeadBody } from './leads.schemas.js';
import { prepareLeads, type NewLead, type PreparedLeads } from './new-lead.js';
import { checkCondition, lockForCondition, lockWriteKeys, type WriteOptions } from '../shared/precondition.js';
import { defaultSort, listView, purgeItem, restoreItem, trashItem, type DeleteOptions, type Trashable } from '../shared/trash.service.js';
import { customFieldsOf, customListOf } from '../fields/custom-fields.service.js';
import { customContactKeys, customEventKeys, type CustomFields, customIndexed, type NewCustomValues, openCustom, patchedCustom, presentCustom, sealCustom } from '../fields/custom-values.js';
import { checkRelationTargets } from '../objects/relation-targets.js';
import { addItemValues, replaceItemValues } from '../fields/custom-fields.store.js';

type Ctx = Pick<AppContext, 'database' | 'cipher' | 'blindIndex' | 'clock' | 'entityTagger'>;
// Re-exported for modules written against the leads service before Caller moved to shared/.
export type { Caller };

const TABLE = 'leads';
const EVENT_FIELDS = ['name', 'email', 'phoneNumber', 'source', 'sourceCampaign', 'status', 'company', 'title', 'notes', 'ownerId', 'accountId', 'duplicateOf', 'externalId'] as const;
const CONTACT_FIELDS = ['email', 'phoneNumber'];

export function toLead(ctx: Ctx, c: CustomFields, s: StoredLead): Lead {
  const where = { table: TABLE, rowId: s.id };
  const lead = present(s, openContact(ctx, 'email', where, s.emailEnc), openContact(ctx, 'phone', where, s.phoneEnc));
  return c.definition.fields.length ? { ...lead, ...presentCustom(c, openCustom(ctx.cipher, c, s.id, s.custom)) } : lead;
}

export const leadFields = (ctx: Ctx, db: Executor, organizationId: string) => customFieldsOf(ctx, db, organizationId, TABLE);
const eventFields = (c: CustomFields) => [...EVENT_FIELDS, ...customEventKeys(c)] as (keyof Lead & string)[];
const sensitiveFields = (c: CustomFields) => [...CONTACT_FIELDS, ...customContactKeys(c)];

/** The API shape of a stored lead whose contact fields are already known in clear. */
export function present(s: Omit<StoredLead, 'seq'>, email: string | null, phoneNumber: string | null): Lead {
  return {
    id: s.id,
    name: s.name,
    email,
    phoneNumber,
    // Stored only through the create and update schemas, which hold them to these enumerations.
    source: s.source as Lead['source'],
    sourceCampaign: s.sourceCampaign,
    status: s.status as Lead['status'],
    company: s.company,
    title: s.title,
    notes: s.notes,
    ownerId: s.ownerId,
    accountId: s.accountId,
    duplicateOf: s.duplicateOf,
    externalId: s.externalId,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
    deletedAt: s.deletedAt,
  };
}

type LeadReferences = { ownerId?: string | null; accountId?: string | null };

/** Per lead, its owner and account that are not an active user and a live account of the organization (two queries in all). */
export async function referenceErrors(db: Executor, organizationId: string, refs: readonly LeadReferences[]): Promise<FieldError[][]> {
  const wanted = (key: 'ownerId' | 'accountId') => [...new Set(refs.map((r) => r[key]).filter((id): id is string => Boolean(id)))];
  const [owners, accounts] = await Promise.all([
    activeUserIds(db, organizationId, wanted('ownerId')),
    existingAccountIds(db, organizationId, wanted('accountId')),
  ]);
  return refs.map((r) => [
    ...(r.ownerId && !owners.has(r.ownerId) ? [{ field: 'ownerId', code: 'not_found', message: 'is not an active user of this organization' }] : []),
    ...(r.accountId && !accounts.has(r.accountId) ? [{ field: 'accountId', code: 'not_found', message: 'is not an account of this organization' }] : []),
  ]);
}

/**
 * Checks that the owners and accounts leads refer to belong to the caller's organization, reporting every
 * bad reference at once. Batch input (`rows`) prefixes fields with the row index ("3.ownerId").
 */
async function checkReferences(db: Executor, organizationId: string, refs: readonly LeadReferences[], rows = false): Promise<void> {
  const errors = (await referenceErrors(db, organizationId, refs)).flatMap((row, i) => row.map((e) => (rows ? { ...e, field: `${i}.${e.field}` } : e)));
  if (errors.length) throw validationFailed(errors);
}

/**
 * Per new lead, whether its external id is taken: by an existing lead (live or trashed), or by an earlier
 * lead of the same rows. One query for all of them.
 */
export async function externalIdClashes(db: Executor, organizationId: string, rows: readonly { externalId?: string | null }[]): Promise<boolean[]> {
  const claimed = new Set((await externalIdHolders(db, 'leads', { column: 'organization_id', value: organizationId }, rows.flatMap((r) => (r.externalId ? [r.externalId] : [])))).keys());
  return rows.map(({ externalId }) => {
    if (!externalId) return false;
    if (claimed.has(externalId)) return true;
    claimed.add(externalId);
    return false;
  });
}

/** Many rows (`crm import`): a taken external id is that row's field error, so the importer reports it and goes on. */
async function checkExternalIds(db: Executor, organizationId: string, rows: readonly { externalId: string | null }[]): Promise<void> {
  if (rows.length < 2) return;
  const clashes = await externalIdClashes(db, organizationId, rows);
  const errors = clashes.flatMap((taken, i) => (taken ? [{ field: `${i}.externalId`, code: 'taken', message: 'is already used by another lead' }] : []));
  if (errors.length) throw validationFailed(errors);
}

/**
 * The lock keys (db/key-locks.ts) of leads being written: their e-mail and phone indexes, which the duplicate
 * probe and the upsert by e-mail look for, and their external ids.
 */
export function leadKeys(organizationId: string, rows: readonly { emailBidx: string | null; phoneBidx: string | null; externalId?: unknown }[]): LockKey[] {
  const contact = (kind: string, bidx: string | null) => (bidx === null ? [] : [{ scope: organizationId, kind, value: bidx }]);
  return [...rows.flatMap((r) => [...contact('leads.email', r.emailBidx), ...contact('leads.phone', r.phoneBidx)]), ...externalIdKeys(TABLE, organizationId, rows)];
}

/** leadKeys of what create or update inputs send, in clear. An invalid phone number has none: it is refused anyway. */
export function inputKeys(ctx: Pick<Ctx, 'blindIndex'>, organizationId: string, inputs: readonly { email?: unknown; phoneNumber?: unknown; externalId?: unknown }[]): LockKey[] {
  const rows = inputs.map(({ email, phoneNumber, externalId }) => {
    const phone = typeof phoneNumber === 'string' ? normalizePhone(phoneNumber) : undefined;
    return {
      emailBidx: typeof email === 'string' ? ctx.blindIndex.compute('email', organizationId, normalizeEmail(email)) : null,
      phoneBidx: phone?.ok ? ctx.blindIndex.compute('phone', organizationId, phone.e164) : null,
      externalId,
    };
  });
  return leadKeys(organizationId, rows);
}

function seal(ctx: Ctx, id: string, organizationId: string, contacts: { email?: string | null; phoneNumber?: string | null }) {
  return sealContacts(ctx, { table: TABLE, rowId: id, organizationId }, contacts);
}

/**
 * For each new lead, the oldest lead sharing its e-mail or phone: an existing one if any, else an earlier
 * lead of the same batch.
 */
async function duplicatesOf(db: Executor, organizationId: string, rows: { id: string; emailBidx: string | null; phoneBidx: string | null }[]): Promise<(string | null)[]> {
  const existing = await findContactMatches(db, organizationId, rows);
  const first = new Map<string, string>();
  for (const m of existing) {
    for (const bidx of [m.emailBidx, m.phoneBidx]) if (bidx !== null && !first.has(bidx)) first.set(bidx, m.id);
  }
  const seqOf = new Map(existing.map((m) => [m.id, m.seq]));
  return rows.map((row) => {
    const candidates = [row.emailBidx, row.phoneBidx].flatMap((b) => (b !== null && first.has(b) ? [first.get(b)!] : []));
    const oldest = candidates.sort((x, y) => (seqOf.get(x) ?? Infinity) - (seqOf.get(y) ?? Infinity))[0] ?? null;
    for (const bidx of [row.emailBidx, row.phoneBidx]) if (bidx !== null && !first.has(bidx)) first.set(bidx, row.id);
    return oldest;
  });
}

/** The changes of lead.created for a lead with custom values: theirs beside the standard ones. */
function customCreatedChanges(standard: Lead, custom: NewCustomValues) {
  const shown: Record<string, unknown> = { ...standard, ...custom.shown };
  const keys = Object.keys(custom.shown);
  return diffChanges(null, shown, [...EVENT_FIELDS, ...keys], [...CONTACT_FIELDS, ...keys.filter((k) => custom.contactKeys.includes(k))]);
}

/** A new lead as its lead.created event shows it: contact fields only as present ("[encrypted]") or null. */
function createdEvent(caller: Caller, row: NewLead, now: Date) {
  const standard = present(row, row.emailEnc === null ? null : ENCRYPTED, row.phoneEnc === null ? null : ENCRYPTED);
  return buildEvent({
    type: 'lead.created',
    organizationId: caller.organizationId,
    object: 'lead',
    objectId: row.id,
    description: 'Lead created',
    changes: row.customValues ? customCreatedChanges(standard, row.customValues) : diffChanges(null, standard, EVENT_FIELDS, CONTACT_FIELDS),
    actor: caller.actor,
    now,
  });
}

/** What a create knows before storing, so that it costs no statement inside the transaction. */
export interface StoreOptions extends Pick<WriteOptions, 'keysLocked'> {
  /** References and external ids are checked already (a batch checks all its items at once). */
  referencesChecked?: boolean;
  /** The organization's assignment rules (from the cache). */
  rules?: AssignmentRule[];
  /** Per row, the lead it duplicates (PostgreSQL, leads without e-mail or phone: see prepareLeadsOf). */
  duplicates?: (string | null)[];
}

/**
 * Stores new leads: locks their keys, checks their references, detects duplicates, runs the organization's
 * assignment rules (for leads without an explicit owner), inserts them and records one lead.created per lead
 * — all in the caller's transaction, so every event carries the assigned owner. The API stores a batch of
 * one, with the rules it learnt before the transaction (prepareLeadsOf); `crm import` thousands per transaction.
 */
export async function storeNewLeads(trx: Executor, caller: Caller, rows: NewLead[], now: Date, opts: StoreOptions = {}): Promise<void> {
  await lockWriteKeys(trx, opts, () => leadKeys(caller.organizationId, rows));
  if (!opts.referencesChecked) {
    await checkReferences(trx, caller.organizationId, rows, rows.length > 1);
    await checkExternalIds(trx, caller.organizationId, rows);
  }
  const duplicates = opts.duplicates ?? (await duplicatesOf(trx, caller.organizationId, rows));
  const unowned = rows.filter((r) => r.ownerId === null);
  const owners = await assignOwners(trx, caller.organizationId, unowned, opts.rules);
  unowned.forEach((row, i) => (row.ownerId = owners[i]!));
  rows.forEach((row, i) => (row.duplicateOf = duplicates[i]!));
  const indexed = rows.flatMap((r) => (r.customValues?.indexed.length ? [{ itemId: r.id, values: r.customValues.indexed }] : []));
  const events = rows.map((row) => createdEvent(caller, row, now));
  // The API's single create: the lead and its event in one statement (one round trip on PostgreSQL).
  if (rows.length === 1 && indexed.length === 0) return insertLeadWithEvent(trx, rows[0]!, events[0]!);
  await insertLeads(trx, rows);
  if (indexed.length) await addItemValues(trx, caller.organizationId, TABLE, indexed);
  await recordEvents(trx, events);
}

/**
 * prepareLeads for the organization's current lead fields (`fields` when the caller has them, else read
 * through `db`: the caller's transaction, if any), with what the store would otherwise read in the transaction.
 */
export async function prepareLeadsOf(ctx: Ctx, db: Executor, organizationId: string, inputs: readonly CreateLeadBody[], fields?: CustomFields): Promise<PreparedLeads & StoreOptions> {
  const rules = await cachedRules(ctx.database, db, organizationId);
  const prepared: PreparedLeads & StoreOptions = { ...prepareLeads(ctx, fields ?? (await leadFields(ctx, db, organizationId)), inputs), rules };
  // A lead without e-mail or phone duplicates none, which spares PostgreSQL's one-statement create its probe
  // (storedInOneStatement). The others are probed in the transaction, after their keys are locked (storeNewLeads):
  // a probe before it would miss a concurrent create of the same address.
  const contactless = prepared.rows.every((r) => r.emailBidx === null && r.phoneBidx === null);
  if (ctx.database.dialect === 'postgres' && contactless) prepared.duplicates = prepared.rows.map(() => null);
  return prepared;
}

/**
 * Whether storePreparedLeads issues exactly one statement for these leads (PostgreSQL): one lead, with no key
 * to lock and probe (e-mail, phone, external id), no owner or account to check, no assignment rule to run, no
 * indexed custom value or relation to check. That statement is atomic on its own, so it needs no transaction
 * around it.
 */
export function storedInOneStatement(prepared: PreparedLeads & StoreOptions): boolean {
  const row = prepared.rows[0];
  if (prepared.rows.length !== 1 || !row || prepared.duplicates === undefined || prepared.rules?.length !== 0) return false;
  if (row.externalId !== null || row.ownerId !== null || row.accountId !== null) return false;
  const values = row.customValues;
  return !values || (values.indexed.length === 0 && prepared.custom.definition.fields.every((f) => f.type !== 'relation' || typeof values.shown[f.key] !== 'string'));
}

/** Stores prepared leads; their relation values must name live items (checked here, in the write's transaction). */
export async function storePreparedLeads(trx: Executor, caller: Caller, prepared: PreparedLeads & StoreOptions, opts: StoreOptions = {}): Promise<Lead[]> {
  for (const row of prepared.rows) {
    if (row.customValues) await checkRelationTargets(trx, caller.organizationId, prepared.custom.definition.fields, new Map(Object.entries(row.customValues.shown)));
  }
  await storeNewLeads(trx, caller, prepared.rows, prepared.now, { rules: prepared.rules, duplicates: prepared.duplicates, ...opts });
  return prepared.rows.map((row, i) => {
    const lead = present(row, prepared.contacts[i]!.email ?? null, prepared.contacts[i]!.phoneNumber ?? null);
    return row.customValues ? { ...lead, ...row.customValues.shown } : lead;
  });
}

export async function createLead(ctx: Ctx, trx: Executor, caller: Caller, input: CreateLeadBody, opts: Pick<WriteOptions, 'keysLocked'> = {}): Promise<Lead> {
  const [lead] = await storePreparedLeads(trx, caller, await prepareLeadsOf(ctx, trx, caller.organizationId, [input]), opts);
  return lead!;
}

/** A live lead of the organization as the API shows it, read in the caller's transaction. */
export async function findLiveLead(ctx: Ctx, db: Executor, organizationId: string, id: string): Promise<Lead | undefined> {
  const stored = await findLead(db, organizationId, id);
  return stored && toLead(ctx, await leadFields(ctx, db, organizationId), stored);
}

export async function getLead(ctx: Ctx, organizationId: string, id: string): Promise<Lead> {
  const stored = await findLead(ctx.database.db, organizationId, id);
  if (!stored) throw notFound('Lead');
  return toLead(ctx, await leadFields(ctx, ctx.database.db, organizationId), stored);
}

export async function listLeads(ctx: Ctx & Pick<AppContext, 'cursorSeal'>, organizationId: string, query: ListLeadsQuery) {
  const view = listView(query);
  const request = listRequest(query, listCursors(ctx, organizationId), defaultSort(view));
  const { status, source, sourceCampaign, ownerId, accountId, externalId } = query;
  const filter = contactFilter(ctx.blindIndex, organizationId, query.q);
  const { custom: c, filters: fields } = await customListOf(ctx, organizationId, TABLE, query);
  const { rows, pagination } = await listStored(ctx.database.db, ctx.database.dialect, organizationId, filter, { status, source, sourceCampaign, ownerId, accountId, externalId }, request, view, fields);
  return { leads: rows.map((l) => toLead(ctx, c, l)), pagination };
}

/**
 * The stored lead a patch makes of `current` (shown as `before`), given the patch's normalized contacts: its
 * contact fields sealed anew only when they change, its custom values (`customClear`, in clear, when the patch
 * sends any) sealed into `custom`. Its duplicate is still the current one; a contact change (`contactChanged`)
 * calls for a fresh probe.
 */
export function patchedLead(ctx: Ctx, c: CustomFields, current: StoredLead, before: Lead, patch: UpdateLeadBody, contacts: ReturnType<typeof normalizeContacts>) {
  const customClear = patchedCustom(ctx.cipher, c, current.id, current.custom, patch);
  const merged = { ...before, ...patch, ...contacts, name: patch.name?.trim() ?? before.name };
  const contactChanged = merged.email !== before.email || merged.phoneNumber !== before.phoneNumber;
  const sealed = contactChanged
    ? seal(ctx, current.id, current.organizationId, merged)
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
    externalId: merged.externalId,
    custom: customClear ? sealCustom(ctx.cipher, c, current.id, customClear) : current.custom,
  };
  return { next, contactChanged, customClear };
}

/** What an update changed, as lead.updated shows it (contact fields only as "[encrypted]"). */
export const leadChanges = (c: CustomFields, before: Lead, after: Lead) => diffChanges(before, after, eventFields(c), sensitiveFields(c));

export function leadUpdatedEvent(caller: Caller, id: string, changes: Changes, now: Date) {
  return buildEvent({
    type: 'lead.updated',
    organizationId: caller.organizationId,
    object: 'lead',
    objectId: id,
    description: `Lead updated: ${Object.keys(changes.after).join(', ')}`,
    changes,
    actor: caller.actor,
    now,
  });
}

/** Applies the sent fields; records lead.updated with only what changed (no event when nothing did). */
export async function updateLead(ctx: Ctx, trx: Executor, caller: Caller, id: string, patch: UpdateLeadBody, opts: WriteOptions = {}): Promise<Lead> {
  await lockWriteKeys(trx, opts, () => inputKeys(ctx, caller.organizationId, [patch]));
  await lockForCondition(ctx, trx, TABLE, caller.organizationId, id, opts);
  const current = await findLead(trx, caller.organizationId, id);
  if (!current) throw notFound('Lead');
  const c = await leadFields(ctx, trx, caller.organizationId);
  const before = toLead(ctx, c, current);
  checkCondition(ctx, opts, 'lead', before);
  const contacts = normalizeContacts(patch);
  await checkReferences(trx, caller.organizationId, [{ ownerId: patch.ownerId, accountId: patch.accountId }]);
  const { next, contactChanged, customClear } = patchedLead(ctx, c, current, before, patch, contacts);
  await checkRelationTargets(trx, caller.organizationId, c.definition.fields, new Map(Object.entries(patch)));
  if (contactChanged) next.duplicateOf = await findOldestDuplicate(trx, caller.organizationId, next, current.seq);
  const after = toLead(ctx, c, next);
  const changes = leadChanges(c, before, after);
  if (Object.keys(changes.after).length === 0) return before;
  const now = ctx.clock.now();
  next.updatedAt = now.toISOString();
  await updateStored(trx, next);
  if (customClear) await replaceItemValues(trx, caller.organizationId, TABLE, id, customIndexed(ctx.blindIndex, c, customClear));
  await recordEvent(trx, leadUpdatedEvent(caller, id, changes, now));
  return { ...after, updatedAt: next.updatedAt };
}

/**
 * Leads in the trash mechanism. A restored lead is checked for duplicates as on create: it gets the oldest
 * live lead sharing its e-mail or phone (one created while it was in the trash, say), or null.
 */
function trashableLeads(ctx: Ctx & Pick<AppContext, 'config'>, c: CustomFields): Trashable<StoredLead, Lead> {
  const organizationId = c.organizationId;
  return {
    object: 'lead',
    label: 'Lead',
    find: (db, id, view) => findLead(db, organizationId, id, view),
    present: (s) => toLead(ctx, c, s),
    async restored(trx, lead) {
      await lockKeys(trx, () => leadKeys(organizationId, [{ emailBidx: lead.emailBidx, phoneBidx: lead.phoneBidx }]));
      const duplicateOf = await findOldestDuplicate(trx, organizationId, lead);
      // Still in the trash here, so the probe (live leads only) never finds the lead itself.
      if (duplicateOf === lead.duplicateOf) return lead;
      const next = { ...lead, duplicateOf };
      await updateStored(trx, next);
      return next;
    },
  };
}

/** DELETE /leads/{id}: to the trash, or for good with `permanent`. */
export async function deleteLead(ctx: Ctx & Pick<AppContext, 'config'>, trx: Executor, caller: Caller, id: string, permanent: boolean, opts: DeleteOptions = {}): Promise<Lead> {
  return (permanent ? purgeItem : trashItem)(ctx, trx, caller, trashableLeads(ctx, await leadFields(ctx, trx, caller.organizationId)), id, opts);
}

export async function restoreLead(ctx: Ctx & Pick<AppContext, 'config'>, trx: Executor, caller: Caller, id: string, opts: WriteOptions = {}): Promise<Lead> {
  return restoreItem(ctx, trx, caller, trashableLeads(ctx, await leadFields(ctx, trx, caller.organizationId)), id, opts);
}
