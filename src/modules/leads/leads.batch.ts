import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/database.js';
import { externalIdHolders, type ExternalIdHolder } from '../../db/external-ids.js';
import { inSavepoint } from '../../db/savepoint.js';
import { normalizeContacts } from '../../crypto/contact-fields.js';
import { AppError, notFound, validationFailed } from '../../errors.js';
import { normalizeEmail } from '../../lib/contact.js';
import type { CrmEvent } from '../events/events.js';
import { recordEvents } from '../events/outbox.store.js';
import { versionCheck, type BatchResource } from '../shared/batch.service.js';
import type { Caller } from '../shared/caller.js';
import { externalIdTaken } from '../shared/external-id.js';
import { CreateLeadBody, UpdateLeadBody, type Lead } from './leads.schemas.js';
import {
  createLead, externalIdClashes, findLiveLead, inputKeys, leadChanges, leadFields, leadUpdatedEvent, patchedLead, present, referenceErrors, storePreparedLeads, toLead, updateLead,
} from './leads.service.js';
import { findContactMatches, findLeads, updateLeadFields, type StoredLead } from './leads.store.js';
import { customFieldCheck } from '../fields/custom-fields.service.js';
import { parseNewLead, preparedLead, type ParsedLead, type PreparedLeads } from './new-lead.js';
import { ContactSealThread } from '../../crypto/contact-seal-thread.js';
import { loadBlindIndexKey } from '../../crypto/blind-index-key.store.js';
import type { CustomFields } from '../fields/custom-values.js';

type Ctx = Pick<AppContext, 'database' | 'cipher' | 'blindIndex' | 'clock' | 'entityTagger'>;

/** A lead prepared before the transaction, and the lead fields it was prepared against. */
interface EarlyLead {
  fields: CustomFields;
  outcome: PreparedLeads | AppError;
}

/** Each lead parsed on its own: a bad phone number is that lead's 400, as on a single create. */
function parseEach(c: CustomFields, inputs: readonly CreateLeadBody[], now: Date): (ParsedLead | AppError)[] {
  return inputs.map((input) => {
    try {
      return parseNewLead(c, input, now);
    } catch (err) {
      return asItemError(err);
    }
  });
}

/** Each lead prepared here, its contacts sealed here too. */
function prepareEach(ctx: Ctx, c: CustomFields, inputs: readonly CreateLeadBody[]): (PreparedLeads | AppError)[] {
  const now = ctx.clock.now();
  return parseEach(c, inputs, now).map((p) => (p instanceof AppError ? p : preparedLead(ctx, c, p, now)));
}

/**
 * Many new leads in one go, for POST /leads/batch: each lead prepared on its own (before the transaction when
 * `early` has it for the lead fields still current), then references and external ids checked (three
 * queries for the whole batch), then every lead that passed stored with storeNewLeads (multi-row statements:
 * the bulk path of `crm import`), in a savepoint. Should that still fail for one of them (a relation value
 * naming an item gone meanwhile), they are created one by one, each in its own savepoint.
 */
async function createLeads(ctx: Ctx, trx: Executor, caller: Caller, inputs: CreateLeadBody[], early: readonly unknown[]): Promise<(Lead | AppError)[]> {
  const organizationId = caller.organizationId;
  const c = await leadFields(ctx, trx, organizationId);
  // A lead prepared against other lead fields (a definition changed since) is prepared again.
  const usable = (p: unknown): p is EarlyLead => (p as EarlyLead | undefined)?.fields === c;
  const again = prepareEach(ctx, c, inputs.filter((_, i) => !usable(early[i])));
  const prepared = inputs.map((_, i) => {
    const p = early[i];
    return usable(p) ? p.outcome : again.shift()!;
  });
  const outcomes: (Lead | AppError | undefined)[] = prepared.map((p) => (p instanceof AppError ? p : undefined));
  (await referenceErrors(trx, organizationId, inputs)).forEach((errors, i) => {
    if (errors.length && outcomes[i] === undefined) outcomes[i] = validationFailed(errors);
  });
  const clashes = await externalIdClashes(trx, organizationId, inputs.map((input, i) => (outcomes[i] === undefined ? input : {})));
  clashes.forEach((taken, i) => {
    if (taken) outcomes[i] = externalIdTaken('lead');
  });
  const pending = inputs.flatMap((_, i) => (outcomes[i] === undefined ? [i] : []));
  if (pending.length === 0) return outcomes as (Lead | AppError)[];
  const ready = pending.map((i) => prepared[i] as PreparedLeads);
  try {
    const all = { custom: c, rows: ready.map((p) => p.rows[0]!), contacts: ready.map((p) => p.contacts[0]!), now: ready[0]!.now };
    // References and external ids were checked above for exactly these leads, in this transaction.
    const leads = await inSavepoint(trx, () => storePreparedLeads(trx, caller, all, { referencesChecked: true, keysLocked: true }));
    pending.forEach((i, k) => (outcomes[i] = leads[k]!));
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    for (const i of pending) outcomes[i] = await inSavepoint(trx, () => createLead(ctx, trx, caller, inputs[i]!, { keysLocked: true })).catch((e: unknown) => asItemError(e));
  }
  return outcomes as (Lead | AppError)[];
}

function asItemError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  throw err;
}

type UpdateItem = { id: string; input: Record<string, unknown>; ifMatch?: string | undefined };

/**
 * Many existing leads updated at once, for the hits of an upsert and PATCH /leads/batch: their rows read in
 * one statement, references checked in two for all, each lead patched as updateLead does it (the same checks
 * in the same order, the same lead.updated), then one UPDATE per set of indexed columns that changed (name,
 * status, account; usually one) and one events INSERT for all that changed, in a savepoint. A lead whose
 * e-mail, phone, external id or custom values change is left to updateLead (undefined): its duplicate probe and
 * external id check depend on what earlier items of the batch wrote. Should the bulk statement still fail,
 * every lead of it is left to updateLead.
 */
async function updateLeads(ctx: Ctx, trx: Executor, caller: Caller, items: UpdateItem[]): Promise<(Lead | AppError | undefined)[]> {
  const organizationId = caller.organizationId;
  const stored = await findLeads(trx, organizationId, items.map((i) => i.id));
  const refs = await referenceErrors(trx, organizationId, items.map((i) => i.input as UpdateLeadBody));
  const c = await leadFields(ctx, trx, organizationId);
  const now = ctx.clock.now();
  const writes: { k: number; next: StoredLead; current: StoredLead; event: CrmEvent; lead: Lead }[] = [];
  const outcomes = items.map((item, k): Lead | AppError | undefined => {
    const current = stored.get(item.id);
    if (!current) return notFound('Lead');
    const before = toLead(ctx, c, current);
    const patch = item.input as UpdateLeadBody;
    try {
      if (item.ifMatch !== undefined) versionCheck(ctx, item.ifMatch, before);
      const contacts = normalizeContacts(patch);
      if (refs[k]!.length) throw validationFailed(refs[k]!);
      const { next, contactChanged, customClear } = patchedLead(ctx, c, current, before, patch, contacts);
      if (contactChanged || customClear || next.externalId !== current.externalId) return undefined;
      const after = { ...before, ...present(next, before.email, before.phoneNumber) };
      const changes = leadChanges(c, before, after);
      if (Object.keys(changes.after).length === 0) return before;
      next.updatedAt = now.toISOString();
      writes.push({ k, next, current, event: leadUpdatedEvent(caller, current.id, changes, now), lead: { ...after, updatedAt: next.updatedAt } });
      return undefined;
    } catch (err) {
      return asItemError(err);
    }
  });
  if (writes.length === 0) return outcomes;
  try {
    await inSavepoint(trx, async () => {
      await updateLeadFields(trx, writes.map((w) => ({ lead: w.next, current: w.current })));
      await recordEvents(trx, writes.map((w) => w.event));
    });
    for (const w of writes) outcomes[w.k] = w.lead;
  } catch (err) {
    asItemError(err);
  }
  return outcomes;
}

/** The oldest live lead of the organization holding each e-mail: one probe of the (email index, seq) index for all. */
async function leadsByEmail(ctx: Ctx, db: Executor, organizationId: string, emails: readonly string[]): Promise<Map<string, ExternalIdHolder>> {
  const byIndex = new Map(emails.map((email) => [ctx.blindIndex.compute('email', organizationId, normalizeEmail(email)), email]));
  const matches = await findContactMatches(db, organizationId, [...byIndex.keys()].map((emailBidx) => ({ emailBidx, phoneBidx: null })));
  const holders = new Map<string, ExternalIdHolder>();
  for (const m of matches) if (m.emailBidx !== null && byIndex.has(m.emailBidx)) holders.set(byIndex.get(m.emailBidx)!, { id: m.id, trashed: false });
  return holders;
}

/**
 * From this many new leads in a batch, their contacts may be sealed on the worker thread. A round trip costs
 * this thread about what sealing one lead here does (measured: 45 µs a call, 40–60 µs a lead here; 10 µs a
 * lead on the worker path at 10 leads, 5 at 100), and adds its wait to the request: small batches, which
 * spare little, stay here.
 */
const OFF_THREAD_LEADS = 10;

/**
 * Each new lead of a batch prepared on its own (a bad phone number is that lead's 400, as on a single create).
 * While this thread has other database work waiting (concurrent batches), their contacts are sealed on the
 * worker of `seals` meanwhile, and this thread stores the other batches (here should the worker fail). With
 * nothing else to do (one client sending batch after batch), they are sealed here: waiting for the worker, or
 * for its half of them, measured slower than sealing them all here.
 */
async function prepareBatch(ctx: Ctx, seals: ContactSealThread, c: CustomFields, inputs: readonly CreateLeadBody[]): Promise<(PreparedLeads | AppError)[]> {
  const now = ctx.clock.now();
  const parsed = parseEach(c, inputs, now);
  const valid = parsed.filter((p): p is ParsedLead => !(p instanceof AppError));
  const offThread = valid.length >= OFF_THREAD_LEADS && ctx.database.writesPending?.() === true;
  const rows = valid.map(({ id, contacts }) => ({ rowId: id, email: contacts.email ?? null, phoneNumber: contacts.phoneNumber ?? null }));
  const sealed = offThread ? await seals.seal('leads', c.organizationId, rows).catch(() => undefined) : undefined;
  const prepared = new Map(valid.map((p, i) => [p, preparedLead(ctx, c, p, now, sealed?.[i])]));
  return parsed.map((p) => (p instanceof AppError ? p : prepared.get(p)!));
}

/** The worker that seals the contacts of batches' new leads, with the keys `crm import` gives its own. */
export function leadSealThread(ctx: Pick<AppContext, 'config' | 'database' | 'cipher' | 'clock'>): ContactSealThread {
  return new ContactSealThread(async () => ({ encryption: ctx.config.encryptionKeys, blindIndex: await loadBlindIndexKey(ctx.database.db, ctx.cipher, ctx.clock.now()) }));
}

/**
 * Leads in the batch runner: upserts by e-mail (the duplicate rule: the oldest live lead) or by external id.
 * The new leads of a batch without upsertBy are prepared before its transaction (prepareBatch).
 */
export function leadBatch(ctx: Ctx & Pick<AppContext, 'outbox'>, seals: ContactSealThread): BatchResource<Lead, unknown> {
  return {
    noun: 'lead',
    label: 'Lead',
    upsertBy: ['externalId', 'email'],
    table: 'leads',
    createSchema: CreateLeadBody,
    updateSchema: UpdateLeadBody,
    openFieldChecks: (db, caller) => customFieldCheck(ctx, db, caller.organizationId, 'leads'),
    find: (db, caller, _params, id) => findLiveLead(ctx, db, caller.organizationId, id),
    async findMany(db, caller, _params, ids) {
      const stored = await findLeads(db, caller.organizationId, ids);
      const c = await leadFields(ctx, db, caller.organizationId);
      return new Map([...stored].map(([id, lead]) => [id, toLead(ctx, c, lead)]));
    },
    create: (trx, caller, _params, input, opts) => createLead(ctx, trx, caller, input as CreateLeadBody, opts),
    update: (trx, caller, _params, id, patch, opts) => updateLead(ctx, trx, caller, id, patch as UpdateLeadBody, opts),
    lockKeys: (caller, _params, inputs) => inputKeys(ctx, caller.organizationId, inputs),
    async prepareMany(db, caller, _params, inputs): Promise<EarlyLead[]> {
      const fields = await leadFields(ctx, db, caller.organizationId);
      return (await prepareBatch(ctx, seals, fields, inputs as CreateLeadBody[])).map((outcome) => ({ fields, outcome }));
    },
    createMany: (trx, caller, _params, inputs, prepared) => createLeads(ctx, trx, caller, inputs as CreateLeadBody[], prepared),
    updateMany: (trx, caller, _params, items) => updateLeads(ctx, trx, caller, items),
    holdersOf(db, caller, _params, by, values) {
      if (by === 'externalId') return externalIdHolders(db, 'leads', { column: 'organization_id', value: caller.organizationId }, values);
      return leadsByEmail(ctx, db, caller.organizationId, values);
    },
  };
}
