import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/database.js';
import { notFound, validationFailed, type FieldError } from '../../errors.js';
import { checkCondition, lockForCondition, lockWriteKeys, type WriteOptions } from '../shared/precondition.js';
import { externalIdKeys } from '../shared/external-id.js';
import type { LockKey } from '../../db/key-locks.js';
import { newId } from '../../lib/ids.js';
import { localDate } from '../../lib/dates.js';
import { listRequest } from '../../lib/list-request.js';
import { listCursors } from '../../crypto/list-cursors.js';
import { recordFilters, recordSort } from './record-filters.js';
import { indexedValues, type IndexedValue } from './record-values.js';
import { buildEvent, diffChanges, type Changes, type EventType } from '../events/events.js';
import { recordEvent } from '../events/outbox.store.js';
import type { Actor } from '../orgs/principal.js';
import { dueField, type Definition } from './definition.js';
import { isContactField, isSearchableField, presentFieldValue, type StoredValue } from './field-values.js';
import { parseRecordInput } from './record-input.js';
import { buildSearchText, prepareQuery } from './record-search.js';
import { findObject, type StoredObject } from './objects.store.js';
import { findRecord, findRecords, insertRecords, listRecords as listStored, updateRecord as updateStored, type NewRecord, type StoredRecord } from './records.store.js';
import type { ListRecordsQuery, RecordInput } from './records.schemas.js';
import { planReminder } from './reminders.service.js';
import { recordValueAad } from './records.encryption.js';
import { deletePendingReminder, deleteReminder, organizationTimezone } from './reminders.store.js';
import { recordContactIndexes } from './record-contacts.js';
import { checkRelationTargets } from './relation-targets.js';
import { addRecordContacts, replaceRecordContacts } from './record-contacts.store.js';
import { externalIdHolders } from '../../db/external-ids.js';
import { defaultSort, listView, purgeItem, restoreItem, trashItem, type DeleteOptions, type Trashable } from '../shared/trash.service.js';
import { own } from '../../lib/own.js';
import { stageLabel } from '../shared/stage-label.js';

type Ctx = Pick<AppContext, 'database' | 'cipher' | 'clock'>;
/** Writers also keep the blind indexes of the records' contact values (record-contacts.store.ts). */
type WriteCtx = Ctx & Pick<AppContext, 'blindIndex'>;
export interface Caller {
  organizationId: string;
  actor: Actor;
}

/** The API shape: flat, every field of the object present (null when unset). */
export type RecordView = { id: string; objectSlug: string; stage: string | null; externalId: string | null; createdAt: string; updatedAt: string; deletedAt: string | null } & Record<string, unknown>;

const aad = recordValueAad;

/** The object `slug` of the organization, or 404 (also for another organization's object). */
export async function requireObject(ctx: Pick<Ctx, 'database'>, db: Executor, organizationId: string, slug: string, lock?: 'share'): Promise<StoredObject> {
  const object = await findObject(db, ctx.database.dialect, organizationId, slug, lock);
  if (!object) throw notFound('Object');
  return object;
}

export function toRecordView(ctx: Pick<Ctx, 'cipher'>, object: StoredObject, r: StoredRecord): RecordView {
  const view: RecordView = { id: r.id, objectSlug: object.slug, stage: r.stage, externalId: r.externalId, createdAt: r.createdAt, updatedAt: r.updatedAt, deletedAt: r.deletedAt };
  for (const field of object.definition.fields) {
    const stored = own(r.data, field.key);
    if (stored === undefined) view[field.key] = null;
    else if (isContactField(field)) view[field.key] = ctx.cipher.decrypt(String(stored), aad(r.id, field.key));
    else view[field.key] = presentFieldValue(field, stored);
  }
  return view;
}

/**
 * `base` with the sent values applied: null removes a value, e-mails and phones are encrypted and bound to
 * the record and field; untouched values (and their ciphertexts) are kept as they are.
 */
function applyValues(ctx: Pick<Ctx, 'cipher'>, definition: Definition, recordId: string, base: Record<string, StoredValue>, values: Map<string, StoredValue | null>): Record<string, StoredValue> {
  const data = { ...base };
  for (const field of definition.fields) {
    const value = values.get(field.key);
    if (value === undefined) continue;
    if (value === null) delete data[field.key];
    else data[field.key] = isContactField(field) ? ctx.cipher.encrypt(String(value), aad(recordId, field.key)) : value;
  }
  return data;
}

/** The columns derived from the data: the search text and the due date (neither is ever a contact field). */
function derived(definition: Definition, data: Record<string, StoredValue>) {
  const texts = definition.fields.filter(isSearchableField).flatMap((f) => {
    const v = own(data, f.key);
    return typeof v === 'string' ? [v] : [];
  });
  const due = dueField(definition);
  const dueValue = due ? own(data, due.key) : undefined;
  return { searchText: buildSearchText(texts), dueDate: typeof dueValue === 'string' ? dueValue : null };
}

/** The filterable values of a record, from its stored data and (for e-mails and phones) its values in clear. */
function filterableValues(ctx: Pick<WriteCtx, 'blindIndex'>, object: StoredObject, data: Record<string, StoredValue>, clear: Record<string, unknown>): IndexedValue[] {
  const values = { ...data, ...Object.fromEntries(contactKeys(object).map((k) => [k, clear[k]])) };
  return indexedValues(object.definition, values, { blindIndex: ctx.blindIndex, organizationId: object.organizationId });
}

/** Validates an input against the object and builds the record to insert (also used by bulk seeding). */
export function buildNewRecord(ctx: Pick<WriteCtx, 'cipher' | 'blindIndex'>, object: StoredObject, input: RecordInput, now: Date): NewRecord {
  const parsed = parseRecordInput(object.definition, input, 'create');
  if (parsed.errors.length) throw validationFailed(parsed.errors);
  const id = newId(now);
  const data = applyValues(ctx, object.definition, id, {}, parsed.values);
  return {
    values: filterableValues(ctx, object, data, Object.fromEntries(parsed.values)),
    id,
    organizationId: object.organizationId,
    objectId: object.id,
    stage: parsed.stage ?? null,
    externalId: parsed.externalId ?? null,
    data,
    ...derived(object.definition, data),
    createdAt: now.toISOString(),
    updatedAt: now.toISOString(),
  };
}

/** What record.created and record.updated describe besides the stage: the external id and every field. */
const fieldKeys = (o: StoredObject) => ['externalId', ...o.definition.fields.map((f) => f.key)];
const contactKeys = (o: StoredObject) => o.definition.fields.filter(isContactField).map((f) => f.key);

async function emit(trx: Executor, caller: Caller, object: StoredObject, type: EventType, view: RecordView, description: string, changes: Changes, now: Date) {
  await recordEvent(
    trx,
    buildEvent({ type, organizationId: caller.organizationId, object: 'record', objectId: view.id, objectSlug: object.slug, description, changes, actor: caller.actor, now }),
  );
}

/**
 * The lock keys of the external ids that inputs set on records of object `slug` (unique per object): scoped by
 * the slug, known before the object is read, so that they are locked before it (slugs never change).
 */
export function recordKeys(organizationId: string, slug: string, inputs: readonly RecordInput[]): LockKey[] {
  return externalIdKeys('records', `${organizationId}/${slug}`, inputs);
}

/** Stores the record (its relations checked against live targets), plans its due reminder, records record.created — in the caller's transaction. */
export async function createRecord(ctx: WriteCtx, trx: Executor, caller: Caller, slug: string, input: RecordInput, opts: Pick<WriteOptions, 'keysLocked'> = {}): Promise<RecordView> {
  await lockWriteKeys(trx, opts, () => recordKeys(caller.organizationId, slug, [input]));
  const object = await requireObject(ctx, trx, caller.organizationId, slug, 'share');
  const now = ctx.clock.now();
  const record = buildNewRecord(ctx, object, input, now);
  await checkRelationTargets(trx, caller.organizationId, object.definition.fields, new Map(Object.entries(record.data)));
  const [stored] = await insertRecords(trx, ctx.database.dialect, object, [record]);
  if (stored!.dueDate !== null) {
    await planReminder(trx, { kind: 'record', itemId: stored!.id, organizationId: caller.organizationId, dueDate: stored!.dueDate, timezone: await organizationTimezone(trx, ctx.database.dialect, caller.organizationId), now });
  }
  const view = toRecordView(ctx, object, stored!);
  const contacts = recordContactIndexes(ctx.blindIndex, caller.organizationId, object.definition, view);
  await addRecordContacts(trx, caller.organizationId, contacts.map((bidx) => ({ recordId: view.id, bidx })));
  await emit(trx, caller, object, 'record.created', view, `${object.name} record created`, diffChanges(null, view, ['stage', ...fieldKeys(object)], contactKeys(object)), now);
  return view;
}

/** A live record of the object as the API shows it, read in the caller's transaction (404 for an unknown object). */
export async function findLiveRecord(ctx: Ctx, db: Executor, organizationId: string, slug: string, id: string): Promise<RecordView | undefined> {
  const object = await requireObject(ctx, db, organizationId, slug);
  const stored = await findRecord(db, object, id);
  return stored && toRecordView(ctx, object, stored);
}

/** The live records of the object among `ids` as the API shows them, read together (404 for an unknown object). */
export async function findLiveRecords(ctx: Ctx, db: Executor, organizationId: string, slug: string, ids: readonly string[]): Promise<RecordView[]> {
  const object = await requireObject(ctx, db, organizationId, slug);
  return (await findRecords(db, object, ids)).map((stored) => toRecordView(ctx, object, stored));
}

/** Which records of the object hold the external ids, live or trashed, by external id (upsert by externalId). */
export async function recordHolders(ctx: Ctx, db: Executor, organizationId: string, slug: string, externalIds: readonly string[]) {
  const object = await requireObject(ctx, db, organizationId, slug);
  return externalIdHolders(db, 'records', { column: 'object_id', value: object.id }, externalIds);
}

export async function getRecord(ctx: Ctx, organizationId: string, slug: string, id: string): Promise<RecordView> {
  const db = ctx.database.db;
  const object = await requireObject(ctx, db, organizationId, slug);
  const stored = await findRecord(db, object, id);
  if (!stored) throw notFound('Record');
  return toRecordView(ctx, object, stored);
}

/**
 * `q`, `stage`, `overdue` (due date before the organization's local today), `filter[…]` on the fields, the
 * time ranges; newest first unless `sort` names createdAt, updatedAt or a date or number field.
 */
export async function listRecords(ctx: Ctx & Pick<AppContext, 'blindIndex' | 'cursorSeal'>, organization: { id: string; timezone: string }, slug: string, query: ListRecordsQuery) {
  const db = ctx.database.db;
  const object = await requireObject(ctx, db, organization.id, slug);
  const errors: FieldError[] = [];
  const stageKeys = object.definition.stages.map((s) => s.key);
  if (query.stage !== undefined && !stageKeys.includes(query.stage)) {
    errors.push({ field: 'stage', code: 'invalid_value', message: stageKeys.length ? `must be one of: ${stageKeys.join(', ')}` : 'this object has no stages' });
  }
  if (query.overdue === true && !dueField(object.definition)) {
    errors.push({ field: 'overdue', code: 'not_allowed', message: `object ${object.slug} has no date field with role "due"` });
  }
  if (errors.length) throw validationFailed(errors);
  const view = listView(query);
  const request = listRequest(query, listCursors(ctx, organization.id), defaultSort(view));
  const sort = request.sort === '-deletedAt' ? { kind: 'column' as const, sort: request.sort } : recordSort(object.definition, request.sort);
  const fields = recordFilters(object.definition, query as Record<string, unknown>, { blindIndex: ctx.blindIndex, organizationId: organization.id });
  const prepared = query.q === undefined ? undefined : prepareQuery(query.q);
  const filter = {
    ...(prepared && prepared.length > 0 ? { query: prepared } : {}),
    ...(query.stage !== undefined ? { stage: query.stage } : {}),
    ...(query.overdue === true ? { dueBefore: localDate(ctx.clock.now(), organization.timezone) } : {}),
    ...(query.externalId !== undefined ? { externalId: query.externalId } : {}),
    fields,
  };
  const { rows, pagination } = await listStored(db, ctx.database.dialect, object, filter, sort, request, view);
  return { records: rows.map((r) => toRecordView(ctx, object, r)), pagination };
}

/**
 * Applies the sent keys. A stage change records record.stage_changed (stage only); other changed fields one
 * record.updated; nothing changed records nothing and keeps updatedAt. A new due date re-plans the reminder.
 */
export async function updateRecord(ctx: WriteCtx & Pick<AppContext, 'entityTagger'>, trx: Executor, caller: Caller, slug: string, id: string, patch: RecordInput, opts: WriteOptions = {}): Promise<RecordView> {
  await lockWriteKeys(trx, opts, () => recordKeys(caller.organizationId, slug, [patch]));
  const object = await requireObject(ctx, trx, caller.organizationId, slug, 'share');
  await lockForCondition(ctx, trx, 'records', caller.organizationId, id, opts);
  const current = await findRecord(trx, object, id);
  if (!current) throw notFound('Record');
  const before = toRecordView(ctx, object, current);
  checkCondition(ctx, opts, 'record', before);
  const parsed = parseRecordInput(object.definition, patch, 'update');
  if (parsed.errors.length) throw validationFailed(parsed.errors);
  // Only the relations sent are checked: a record whose target went to the trash since can still change otherwise.
  await checkRelationTargets(trx, caller.organizationId, object.definition.fields, parsed.values);
  const data = applyValues(ctx, object.definition, id, current.data, parsed.values);
  const next: StoredRecord = {
    ...current,
    stage: parsed.stage === undefined ? current.stage : parsed.stage,
    externalId: parsed.externalId === undefined ? current.externalId : parsed.externalId,
    data,
    ...derived(object.definition, data),
  };
  const after = toRecordView(ctx, object, next);
  const stageChange = diffChanges(before, after, ['stage']);
  const otherChanges = diffChanges(before, after, fieldKeys(object), contactKeys(object));
  const stageChanged = Object.keys(stageChange.after).length > 0;
  const othersChanged = Object.keys(otherChanges.after).length > 0;
  if (!stageChanged && !othersChanged) return before;
  const now = ctx.clock.now();
  next.updatedAt = now.toISOString();
  await updateStored(trx, ctx.database.dialect, object, current, next, filterableValues(ctx, object, next.data, after));
  if (contactKeys(object).some((key) => Object.hasOwn(otherChanges.after, key))) {
    await replaceRecordContacts(trx, caller.organizationId, id, recordContactIndexes(ctx.blindIndex, caller.organizationId, object.definition, after));
  }
  if (next.dueDate !== current.dueDate) {
    await planReminder(trx, { kind: 'record', itemId: id, organizationId: caller.organizationId, dueDate: next.dueDate, timezone: await organizationTimezone(trx, ctx.database.dialect, caller.organizationId), now });
  }
  const view = { ...after, updatedAt: next.updatedAt };
  if (stageChanged) await emit(trx, caller, object, 'record.stage_changed', view, `${object.name} record moved from ${stageLabel(object.definition.stages, before.stage)} to ${stageLabel(object.definition.stages, after.stage)}`, stageChange, now);
  if (othersChanged) await emit(trx, caller, object, 'record.updated', view, `${object.name} record updated: ${Object.keys(otherChanges.after).join(', ')}`, otherChanges, now);
  return view;
}

/** Records in the trash mechanism: a trashed record's pending reminder is dropped, and planned again on restore. */
async function trashableRecords(ctx: Ctx, trx: Executor, caller: Caller, slug: string): Promise<Trashable<StoredRecord, RecordView>> {
  const object = await requireObject(ctx, trx, caller.organizationId, slug, 'share');
  return {
    object: 'record',
    label: 'Record',
    objectSlug: object.slug,
    find: (db, id, view) => findRecord(db, object, id, view),
    present: (r) => toRecordView(ctx, object, r),
    trashed: (db, r) => deletePendingReminder(db, r.id),
    purging: (db, r) => deleteReminder(db, r.id),
    async restored(db, r) {
      if (r.dueDate === null) return r;
      const timezone = await organizationTimezone(db, ctx.database.dialect, caller.organizationId);
      await planReminder(db, { kind: 'record', itemId: r.id, organizationId: caller.organizationId, dueDate: r.dueDate, timezone, now: ctx.clock.now() });
      return r;
    },
  };
}

/** DELETE /objects/{object}/records/{id}: to the trash, or for good with `permanent`. */
export async function deleteRecord(ctx: Ctx & Pick<AppContext, 'config' | 'entityTagger'>, trx: Executor, caller: Caller, slug: string, id: string, permanent: boolean, opts: DeleteOptions = {}): Promise<RecordView> {
  return (permanent ? purgeItem : trashItem)(ctx, trx, caller, await trashableRecords(ctx, trx, caller, slug), id, opts);
}

export async function restoreRecord(ctx: Ctx & Pick<AppContext, 'config' | 'entityTagger'>, trx: Executor, caller: Caller, slug: string, id: string, opts: WriteOptions = {}): Promise<RecordView> {
  return restoreItem(ctx, trx, caller, await trashableRecords(ctx, trx, caller, slug), id, opts);
}
