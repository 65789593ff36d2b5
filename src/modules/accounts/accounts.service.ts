import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/database.js';
import { notFound, validationFailed } from '../../errors.js';
import { checkCondition, lockForCondition, lockWriteKeys, type WriteOptions } from '../shared/precondition.js';
import { externalIdKeys } from '../shared/external-id.js';
import { newId } from '../../lib/ids.js';
import { listRequest } from '../../lib/list-request.js';
import { listCursors } from '../../crypto/list-cursors.js';
import { normalizeContacts, openContact, sealContacts } from '../../crypto/contact-fields.js';
import { buildEvent, diffChanges } from '../events/events.js';
import { recordEvent } from '../events/outbox.store.js';
import { activeUserIds } from '../orgs/users.store.js';
import type { Caller } from '../shared/caller.js';
import { contactFilter } from '../shared/contact-query.js';
import { findAccount, insertAccount, listAccounts as listStored, updateAccount as updateStored, type StoredAccount } from './accounts.store.js';
import type { Account, CreateAccountBody, ListAccountsQuery, UpdateAccountBody } from './accounts.schemas.js';
import { defaultSort, listView, purgeItem, restoreItem, trashItem, type DeleteOptions, type Trashable } from '../shared/trash.service.js';
import { customFieldsOf, customListOf } from '../fields/custom-fields.service.js';
import { customContactKeys, customEventKeys, type CustomFields, customIndexed, customSealer, openCustom, parseCustomInput, patchedCustom, presentCustom, sealCustom } from '../fields/custom-values.js';
import { checkRelationTargets } from '../objects/relation-targets.js';
import { addItemValues, replaceItemValues } from '../fields/custom-fields.store.js';
import { BUILTIN } from '../fields/builtin-resources.js';

type Ctx = Pick<AppContext, 'database' | 'cipher' | 'blindIndex' | 'clock' | 'entityTagger'>;

const TABLE = 'accounts';
const EVENT_FIELDS = ['name', 'domain', 'email', 'phoneNumber', 'industry', 'website', 'ownerId', 'externalId'] as const;
const CONTACT_FIELDS = ['email', 'phoneNumber'];

const accountFields = (ctx: Ctx, db: Executor, organizationId: string) => customFieldsOf(ctx, db, organizationId, TABLE);
const eventFields = (c: CustomFields) => [...EVENT_FIELDS, ...customEventKeys(c)] as (keyof Account & string)[];
const sensitiveFields = (c: CustomFields) => [...CONTACT_FIELDS, ...customContactKeys(c)];

function toAccount(ctx: Ctx, c: CustomFields, s: StoredAccount): Account {
  const where = { table: TABLE, rowId: s.id };
  const custom = c.definition.fields.length ? presentCustom(c, openCustom(ctx.cipher, c, s.id, s.custom)) : {};
  return {
    id: s.id,
    name: s.name,
    domain: s.domain,
    email: openContact(ctx, 'email', where, s.emailEnc),
    phoneNumber: openContact(ctx, 'phone', where, s.phoneEnc),
    industry: s.industry,
    website: s.website,
    ownerId: s.ownerId,
    externalId: s.externalId,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
    deletedAt: s.deletedAt,
    ...custom,
  };
}

async function checkOwner(db: Executor, organizationId: string, ownerId: string | null | undefined): Promise<void> {
  if (!ownerId) return;
  const known = await activeUserIds(db, organizationId, [ownerId]);
  if (!known.has(ownerId)) throw validationFailed([{ field: 'ownerId', code: 'not_found', message: 'is not an active user of this organization' }]);
}

const normalizeDomain = (domain: string | null | undefined) => (domain == null ? domain : domain.toLowerCase());

/** Stores the account and records account.created in the caller's transaction. */
export async function createAccount(ctx: Ctx, trx: Executor, caller: Caller, input: CreateAccountBody, opts: Pick<WriteOptions, 'keysLocked'> = {}): Promise<Account> {
  await lockWriteKeys(trx, opts, () => externalIdKeys(TABLE, caller.organizationId, [input]));
  const c = await accountFields(ctx, trx, caller.organizationId);
  const values = parseCustomInput(c.definition, input, BUILTIN.accounts.writable, BUILTIN.accounts.readOnly, 'create');
  const contacts = normalizeContacts(input);
  await checkOwner(trx, caller.organizationId, input.ownerId);
  await checkRelationTargets(trx, caller.organizationId, c.definition.fields, values);
  const now = ctx.clock.now();
  const id = newId(now);
  const custom = c.definition.fields.length ? customSealer(ctx, c, values)(id) : undefined;
  const stored: StoredAccount = {
    seq: 0,
    id,
    organizationId: caller.organizationId,
    name: input.name.trim(),
    domain: normalizeDomain(input.domain) ?? null,
    ...sealContacts(ctx, { table: TABLE, rowId: id, organizationId: caller.organizationId }, contacts),
    industry: input.industry ?? null,
    website: input.website ?? null,
    ownerId: input.ownerId ?? null,
    externalId: input.externalId ?? null,
    custom: custom?.json ?? null,
    createdAt: now.toISOString(),
    updatedAt: now.toISOString(),
    deletedAt: null,
  };
  await insertAccount(trx, stored);
  if (custom?.values.indexed.length) await addItemValues(trx, caller.organizationId, TABLE, [{ itemId: id, values: custom.values.indexed }]);
  const account = toAccount(ctx, c, stored);
  await recordEvent(
    trx,
    buildEvent({
      type: 'account.created',
      organizationId: caller.organizationId,
      object: 'account',
      objectId: id,
      description: 'Account created',
      changes: diffChanges(null, account, eventFields(c), sensitiveFields(c)),
      actor: caller.actor,
      now,
    }),
  );
  return account;
}

/** A live account of the organization as the API shows it, read in the caller's transaction. */
export async function findLiveAccount(ctx: Ctx, db: Executor, organizationId: string, id: string): Promise<Account | undefined> {
  const stored = await findAccount(db, organizationId, id);
  return stored && toAccount(ctx, await accountFields(ctx, db, organizationId), stored);
}

export async function getAccount(ctx: Ctx, organizationId: string, id: string): Promise<Account> {
  const [c, stored] = await Promise.all([accountFields(ctx, ctx.database.db, organizationId), findAccount(ctx.database.db, organizationId, id)]);
  if (!stored) throw notFound('Account');
  return toAccount(ctx, c, stored);
}

export async function listAccounts(ctx: Ctx & Pick<AppContext, 'cursorSeal'>, organizationId: string, query: ListAccountsQuery) {
  const view = listView(query);
  const filter = contactFilter(ctx.blindIndex, organizationId, query.q);
  const { custom: c, filters: fields } = await customListOf(ctx, organizationId, TABLE, query);
  const { rows, pagination } = await listStored(ctx.database.db, ctx.database.dialect, organizationId, filter, { ownerId: query.ownerId, externalId: query.externalId }, listRequest(query, listCursors(ctx, organizationId), defaultSort(view)), view, fields);
  return { accounts: rows.map((a) => toAccount(ctx, c, a)), pagination };
}

/** Applies the sent fields; records account.updated with only what changed (no event when nothing did). */
export async function updateAccount(ctx: Ctx, trx: Executor, caller: Caller, id: string, patch: UpdateAccountBody, opts: WriteOptions = {}): Promise<Account> {
  await lockWriteKeys(trx, opts, () => externalIdKeys(TABLE, caller.organizationId, [patch]));
  await lockForCondition(ctx, trx, TABLE, caller.organizationId, id, opts);
  const current = await findAccount(trx, caller.organizationId, id);
  if (!current) throw notFound('Account');
  const c = await accountFields(ctx, trx, caller.organizationId);
  const before = toAccount(ctx, c, current);
  checkCondition(ctx, opts, 'account', before);
  const customClear = patchedCustom(ctx.cipher, c, id, current.custom, patch);
  const contacts = normalizeContacts(patch);
  await checkOwner(trx, caller.organizationId, patch.ownerId);
  await checkRelationTargets(trx, caller.organizationId, c.definition.fields, new Map(Object.entries(patch)));
  const merged: Account = { ...before, ...patch, ...contacts, ...(customClear ? presentCustom(c, customClear) : {}), name: patch.name?.trim() ?? before.name };
  if (patch.domain !== undefined) merged.domain = normalizeDomain(patch.domain) ?? null;
  const contactChanged = merged.email !== before.email || merged.phoneNumber !== before.phoneNumber;
  const changes = diffChanges(before, merged, eventFields(c), sensitiveFields(c));
  if (Object.keys(changes.after).length === 0) return before;
  const now = ctx.clock.now();
  const next: StoredAccount = {
    ...current,
    ...(contactChanged ? sealContacts(ctx, { table: TABLE, rowId: id, organizationId: caller.organizationId }, merged) : {}),
    name: merged.name,
    domain: merged.domain,
    industry: merged.industry,
    website: merged.website,
    ownerId: merged.ownerId,
    externalId: merged.externalId,
    custom: customClear ? sealCustom(ctx.cipher, c, id, customClear) : current.custom,
    updatedAt: now.toISOString(),
  };
  await updateStored(trx, next);
  if (customClear) await replaceItemValues(trx, caller.organizationId, TABLE, id, customIndexed(ctx.blindIndex, c, customClear));
  await recordEvent(
    trx,
    buildEvent({
      type: 'account.updated',
      organizationId: caller.organizationId,
      object: 'account',
      objectId: id,
      description: `Account updated: ${Object.keys(changes.after).join(', ')}`,
      changes,
      actor: caller.actor,
      now,
    }),
  );
  return { ...merged, updatedAt: next.updatedAt };
}

function trashableAccounts(ctx: Ctx, c: CustomFields): Trashable<StoredAccount, Account> {
  return { object: 'account', label: 'Account', find: (db, id, view) => findAccount(db, c.organizationId, id, view), present: (s) => toAccount(ctx, c, s) };
}

/** DELETE /accounts/{id}: to the trash, or for good with `permanent`; leads and deals keep its id (then 404). */
export async function deleteAccount(ctx: Ctx & Pick<AppContext, 'config'>, trx: Executor, caller: Caller, id: string, permanent: boolean, opts: DeleteOptions = {}): Promise<Account> {
  return (permanent ? purgeItem : trashItem)(ctx, trx, caller, trashableAccounts(ctx, await accountFields(ctx, trx, caller.organizationId)), id, opts);
}

export async function restoreAccount(ctx: Ctx & Pick<AppContext, 'config'>, trx: Executor, caller: Caller, id: string, opts: WriteOptions = {}): Promise<Account> {
  return restoreItem(ctx, trx, caller, trashableAccounts(ctx, await accountFields(ctx, trx, caller.organizationId)), id, opts);
}
