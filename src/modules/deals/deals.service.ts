import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/database.js';
import { notFound, validationFailed, type FieldError } from '../../errors.js';
import { checkCondition, lockForCondition, lockWriteKeys, type WriteOptions } from '../shared/precondition.js';
import { externalIdKeys } from '../shared/external-id.js';
import { formatDateOnly, parseDateOnly } from '../../lib/dates.js';
import { newId } from '../../lib/ids.js';
import { normalizeCurrency, parseAmount } from '../../lib/money.js';
import { listRequest } from '../../lib/list-request.js';
import { listCursors } from '../../crypto/list-cursors.js';
import { existingAccountIds } from '../accounts/accounts.store.js';
import { buildEvent, diffChanges, type Changes, type EventType } from '../events/events.js';
import { recordEvent } from '../events/outbox.store.js';
import { existingLeadIds } from '../leads/leads.store.js';
import { activeUserIds } from '../orgs/users.store.js';
import type { Caller } from '../shared/caller.js';
import { defaultSort, listView, purgeItem, restoreItem, trashItem, type DeleteOptions, type Trashable } from '../shared/trash.service.js';
import type { TrashView } from '../../db/trash.js';
import { findDeal, insertDeal, listDeals as listStored, updateDeal as updateStored, type StoredDeal } from './deals.store.js';
import type { CreateDealBody, Deal, ListDealsQuery, UpdateDealBody } from './deals.schemas.js';
import type { DealStage } from './stages.schemas.js';
import { getDealStages, unknownStage } from './stages.service.js';
import { lockStages } from './stages.store.js';
import { customFieldsOf, customListOf } from '../fields/custom-fields.service.js';
import { customContactKeys, customEventKeys, type CustomFields, customIndexed, customSealer, openCustom, parseCustomInput, patchedCustom, presentCustom, sealCustom } from '../fields/custom-values.js';
import { relationTargetErrors } from '../objects/relation-targets.js';
import { addItemValues, replaceItemValues } from '../fields/custom-fields.store.js';
import { BUILTIN } from '../fields/builtin-resources.js';
import { stageLabel } from '../shared/stage-label.js';

type Ctx = Pick<AppContext, 'database' | 'clock' | 'cipher' | 'blindIndex' | 'entityTagger'>;
type DealValues = Pick<StoredDeal, 'name' | 'stage' | 'amount' | 'currency' | 'accountId' | 'leadId' | 'ownerId' | 'expectedCloseDate' | 'externalId'>;

// A stage change is its own event (deal.stage_changed); every other field goes to deal.updated.
const OTHER_FIELDS = ['name', 'amount', 'currency', 'accountId', 'leadId', 'ownerId', 'expectedCloseDate', 'externalId'] as const;
const CREATED_FIELDS = ['name', 'stage', ...OTHER_FIELDS] as const;

const dealFields = (ctx: Ctx, db: Executor, organizationId: string) => customFieldsOf(ctx, db, organizationId, 'deals');

function toDeal(ctx: Ctx, c: CustomFields, s: Omit<StoredDeal, 'seq'>): Deal {
  const custom = c.definition.fields.length ? presentCustom(c, openCustom(ctx.cipher, c, s.id, s.custom)) : {};
  return {
    id: s.id,
    name: s.name,
    stage: s.stage,
    amount: s.amount,
    currency: s.currency,
    accountId: s.accountId,
    leadId: s.leadId,
    ownerId: s.ownerId,
    expectedCloseDate: s.expectedCloseDate === null ? null : formatDateOnly(s.expectedCloseDate),
    externalId: s.externalId,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
    deletedAt: s.deletedAt,
    ...custom,
  };
}

/** The sent fields in their stored form; every value that can't be stored adds a field error. */
function readInput(input: UpdateDealBody, stages: readonly DealStage[], errors: FieldError[]): Partial<DealValues> {
  const out: Partial<DealValues> = {};
  if (input.name !== undefined) out.name = input.name.trim();
  if (input.stage !== undefined) {
    if (stages.some((s) => s.key === input.stage)) out.stage = input.stage;
    else errors.push(unknownStage('stage', stages));
  }
  if (input.amount !== undefined) {
    const amount = input.amount === null ? null : parseAmount(input.amount);
    if (amount === null || amount.ok) out.amount = amount?.value ?? null;
    else errors.push({ field: 'amount', code: amount.code, message: amount.reason });
  }
  if (input.currency !== undefined) {
    const currency = input.currency === null ? null : normalizeCurrency(input.currency);
    if (input.currency === null || currency !== null) out.currency = currency;
    else errors.push({ field: 'currency', code: 'invalid_value', message: 'is not an ISO 4217 currency code' });
  }
  if (input.expectedCloseDate !== undefined) {
    const day = input.expectedCloseDate === null ? null : parseDateOnly(input.expectedCloseDate);
    if (day === null || day.ok) out.expectedCloseDate = day?.value ?? null;
    else errors.push({ field: 'expectedCloseDate', code: 'invalid_date', message: day.reason });
  }
  for (const key of ['accountId', 'leadId', 'ownerId', 'externalId'] as const) if (input[key] !== undefined) out[key] = input[key];
  return out;
}

/** Adds an error for each sent reference that is not a record of the caller's organization (one query per kind). */
async function checkReferences(db: Executor, organizationId: string, refs: Partial<DealValues>, errors: FieldError[]): Promise<void> {
  const checks = [
    ['accountId', existingAccountIds, 'an account'],
    ['leadId', existingLeadIds, 'a lead'],
    ['ownerId', activeUserIds, 'an active user'],
  ] as const;
  for (const [field, existing, what] of checks) {
    const id = refs[field];
    if (!id) continue;
    if (!(await existing(db, organizationId, [id])).has(id)) errors.push({ field, code: 'not_found', message: `is not ${what} of this organization` });
  }
}

function checkCurrency(values: DealValues, errors: FieldError[]): void {
  if (values.amount !== null && values.currency === null && !errors.some((e) => e.field === 'currency')) {
    errors.push({ field: 'currency', code: 'required', message: 'is required when amount is set' });
  }
}

async function event(trx: Executor, caller: Caller, type: EventType, deal: Deal, description: string, changes: Changes, now: Date) {
  await recordEvent(trx, buildEvent({ type, organizationId: caller.organizationId, object: 'deal', objectId: deal.id, description, changes, actor: caller.actor, now }));
}

/** Stores the deal (stage defaulting to the organization's first) and records deal.created, in the caller's transaction. */
export async function createDeal(ctx: Ctx, trx: Executor, caller: Caller, input: CreateDealBody, opts: Pick<WriteOptions, 'keysLocked'> = {}): Promise<Deal> {
  const organizationId = caller.organizationId;
  await lockWriteKeys(trx, opts, () => externalIdKeys('deals', organizationId, [input]));
  const c = await dealFields(ctx, trx, organizationId);
  const customValues = parseCustomInput(c.definition, input, BUILTIN.deals.writable, BUILTIN.deals.readOnly, 'create');
  await lockStages(trx, ctx.database.dialect, organizationId, 'read');
  const stages = await getDealStages(trx, organizationId);
  const errors: FieldError[] = [];
  const sent = readInput(input, stages, errors);
  await checkReferences(trx, organizationId, sent, errors);
  errors.push(...(await relationTargetErrors(trx, organizationId, c.definition.fields, customValues)));
  const values: DealValues = {
    name: input.name.trim(),
    stage: sent.stage ?? stages[0]!.key,
    amount: sent.amount ?? null,
    currency: sent.currency ?? null,
    accountId: sent.accountId ?? null,
    leadId: sent.leadId ?? null,
    ownerId: sent.ownerId ?? null,
    expectedCloseDate: sent.expectedCloseDate ?? null,
    externalId: sent.externalId ?? null,
  };
  checkCurrency(values, errors);
  if (errors.length) throw validationFailed(errors);
  const now = ctx.clock.now();
  const id = newId(now);
  const custom = c.definition.fields.length ? customSealer(ctx, c, customValues)(id) : undefined;
  const stored = { id, organizationId, ...values, custom: custom?.json ?? null, createdAt: now.toISOString(), updatedAt: now.toISOString(), deletedAt: null };
  await insertDeal(trx, stored);
  if (custom?.values.indexed.length) await addItemValues(trx, organizationId, 'deals', [{ itemId: id, values: custom.values.indexed }]);
  const deal = toDeal(ctx, c, stored);
  await event(trx, caller, 'deal.created', deal, 'Deal created', diffChanges(null, deal, [...CREATED_FIELDS, ...customEventKeys(c)] as (keyof Deal & string)[], customContactKeys(c)), now);
  return deal;
}

/** A live deal of the organization as the API shows it, read in the caller's transaction. */
export async function findLiveDeal(ctx: Ctx, db: Executor, organizationId: string, id: string): Promise<Deal | undefined> {
  const stored = await findDeal(db, organizationId, id);
  return stored && toDeal(ctx, await dealFields(ctx, db, organizationId), stored);
}

export async function getDeal(ctx: Ctx, organizationId: string, id: string): Promise<Deal> {
  const [c, stored] = await Promise.all([dealFields(ctx, ctx.database.db, organizationId), findDeal(ctx.database.db, organizationId, id)]);
  if (!stored) throw notFound('Deal');
  return toDeal(ctx, c, stored);
}

export async function listDeals(ctx: Ctx & Pick<AppContext, 'cursorSeal'>, organizationId: string, query: ListDealsQuery) {
  const { db, dialect } = ctx.database;
  if (query.stage !== undefined) {
    const stages = await getDealStages(db, organizationId);
    if (!stages.some((s) => s.key === query.stage)) throw validationFailed([unknownStage('stage', stages)]);
  }
  const view = listView(query);
  const q = query.q?.trim();
  const filter = { stage: query.stage, accountId: query.accountId, leadId: query.leadId, ownerId: query.ownerId, externalId: query.externalId, nameContains: q === '' ? undefined : q };
  const { custom: c, filters: fields } = await customListOf(ctx, organizationId, 'deals', query);
  const { rows, pagination } = await listStored(db, dialect, organizationId, { ...filter, fields }, listRequest(query, listCursors(ctx, organizationId), defaultSort(view)), view);
  return { deals: rows.map((d) => toDeal(ctx, c, d)), pagination };
}

/**
 * Applies the sent fields. A stage change records deal.stage_changed (stage only); any other changed fields
 * record one deal.updated with just those; nothing changed records nothing and keeps updatedAt.
 */
/**
 * `view`: 'any' lets a stage move reach trashed deals too (PUT /deal-stages); the API's PATCH changes live deals only.
 * `formerStages`: the list PUT /deal-stages replaced, so that a move out of a removed stage names it by its label.
 */
export async function updateDeal(ctx: Ctx, trx: Executor, caller: Caller, id: string, patch: UpdateDealBody, opts: WriteOptions & { formerStages?: readonly DealStage[] } = {}, view: TrashView = 'live'): Promise<Deal> {
  const organizationId = caller.organizationId;
  const { dialect } = ctx.database;
  await lockWriteKeys(trx, opts, () => externalIdKeys('deals', organizationId, [patch]));
  await lockStages(trx, dialect, organizationId, 'read');
  await lockForCondition(ctx, trx, 'deals', organizationId, id, opts);
  const current = await findDeal(trx, organizationId, id, { dialect }, view);
  if (!current) throw notFound('Deal');
  const c = await dealFields(ctx, trx, organizationId);
  const before = toDeal(ctx, c, current);
  checkCondition(ctx, opts, 'deal', before);
  const customClear = patchedCustom(ctx.cipher, c, id, current.custom, patch);
  const stages = await getDealStages(trx, organizationId);
  const errors: FieldError[] = [];
  const sent = readInput(patch, stages, errors);
  await checkReferences(trx, organizationId, sent, errors);
  errors.push(...(await relationTargetErrors(trx, organizationId, c.definition.fields, new Map(Object.entries(patch)))));
  const next: StoredDeal = { ...current, ...sent, custom: customClear ? sealCustom(ctx.cipher, c, id, customClear) : current.custom };
  checkCurrency(next, errors);
  if (errors.length) throw validationFailed(errors);

  const after = toDeal(ctx, c, next);
  const stageChange = diffChanges(before, after, ['stage']);
  const otherChanges = diffChanges(before, after, [...OTHER_FIELDS, ...customEventKeys(c)] as (keyof Deal & string)[], customContactKeys(c));
  const stageChanged = 'stage' in stageChange.after;
  const othersChanged = Object.keys(otherChanges.after).length > 0;
  if (!stageChanged && !othersChanged) return before;

  const now = ctx.clock.now();
  next.updatedAt = now.toISOString();
  await updateStored(trx, next);
  if (customClear) await replaceItemValues(trx, organizationId, 'deals', id, customIndexed(ctx.blindIndex, c, customClear));
  const deal = { ...after, updatedAt: next.updatedAt };
  if (stageChanged) await event(trx, caller, 'deal.stage_changed', deal, `Deal moved from ${stageLabel([...stages, ...(opts.formerStages ?? [])], before.stage)} to ${stageLabel(stages, after.stage)}`, stageChange, now);
  if (othersChanged) await event(trx, caller, 'deal.updated', deal, `Deal updated: ${Object.keys(otherChanges.after).join(', ')}`, otherChanges, now);
  return deal;
}

function trashableDeals(ctx: Ctx, c: CustomFields): Trashable<StoredDeal, Deal> {
  return { object: 'deal', label: 'Deal', find: (db, id, view) => findDeal(db, c.organizationId, id, undefined, view), present: (s) => toDeal(ctx, c, s) };
}

/** DELETE /deals/{id}: to the trash, or for good with `permanent`. */
export async function deleteDeal(ctx: Ctx & Pick<AppContext, 'config'>, trx: Executor, caller: Caller, id: string, permanent: boolean, opts: DeleteOptions = {}): Promise<Deal> {
  return (permanent ? purgeItem : trashItem)(ctx, trx, caller, trashableDeals(ctx, await dealFields(ctx, trx, caller.organizationId)), id, opts);
}

export async function restoreDeal(ctx: Ctx & Pick<AppContext, 'config'>, trx: Executor, caller: Caller, id: string, opts: WriteOptions = {}): Promise<Deal> {
  return restoreItem(ctx, trx, caller, trashableDeals(ctx, await dealFields(ctx, trx, caller.organizationId)), id, opts);
}
