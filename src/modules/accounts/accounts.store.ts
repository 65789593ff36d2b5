import { namesFewItems, type FieldFilter } from '../objects/record-filters.js';
import { customFieldCondition } from '../fields/custom-fields.store.js';
import type { Dialect } from '../../config.js';
import type { Executor } from '../../db/database.js';
import type { AccountsTable } from '../../db/schema.js';
import type { ListRequest } from '../../lib/list-request.js';
import { equalityConditions, listScope, readColumnPage, timeRangeConditions, type ListPage } from '../../db/list-page.js';
import { contactFilterCondition, contactViewCondition, type ContactFilter } from '../shared/contact-query.js';
import { contactColumns } from '../../crypto/contact-fields.js';
import { inView, type TrashView } from '../../db/trash.js';
import { guardExternalId } from '../shared/external-id.js';

export const ACCOUNT_ENCRYPTED_COLUMNS = contactColumns('accounts', ['email', 'phone']);

/** An account as stored: contact fields still encrypted. */
export interface StoredAccount {
  seq: number;
  id: string;
  organizationId: string;
  name: string;
  domain: string | null;
  emailEnc: string | null;
  emailBidx: string | null;
  phoneEnc: string | null;
  phoneBidx: string | null;
  industry: string | null;
  website: string | null;
  ownerId: string | null;
  externalId: string | null;
  /** Custom field values as stored (JSON, e-mails and phones sealed; modules/fields/custom-values.ts). */
  custom: string | null;
  createdAt: string;
  updatedAt: string;
  deletedAt: string | null;
}

type Row = Omit<AccountsTable, 'seq' | 'deleted_at'> & { seq: number; deleted_at: string | null };

const toStored = (r: Row): StoredAccount => ({
  seq: r.seq,
  id: r.id,
  organizationId: r.organization_id,
  name: r.name,
  domain: r.domain,
  emailEnc: r.email_enc,
  emailBidx: r.email_bidx,
  phoneEnc: r.phone_enc,
  phoneBidx: r.phone_bidx,
  industry: r.industry,
  website: r.website,
  ownerId: r.owner_id,
  externalId: r.external_id,
  custom: r.custom,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  deletedAt: r.deleted_at,
});

/** The written columns: `deleted_at` only ever changes through db/trash.ts. */
function toRow(a: Omit<StoredAccount, 'seq'>): Omit<AccountsTable, 'seq' | 'deleted_at'> {
  return {
    id: a.id,
    organization_id: a.organizationId,
    name: a.name,
    domain: a.domain,
    email_enc: a.emailEnc,
    email_bidx: a.emailBidx,
    phone_enc: a.phoneEnc,
    phone_bidx: a.phoneBidx,
    industry: a.industry,
    website: a.website,
    owner_id: a.ownerId,
    external_id: a.externalId,
    custom: a.custom,
    created_at: a.createdAt,
    updated_at: a.updatedAt,
  };
}

export async function insertAccount(db: Executor, account: Omit<StoredAccount, 'seq'>): Promise<void> {
  await guardExternalId('account', () => db.insertInto('accounts').values(toRow(account)).execute());
}

/** One account of the organization; a live one unless `view` says otherwise. */
export async function findAccount(db: Executor, organizationId: string, id: string, view: TrashView = 'live'): Promise<StoredAccount | undefined> {
  const row = await db.selectFrom('accounts').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).where(inView('accounts', view)).executeTakeFirst();
  return row && toStored(row);
}

export async function updateAccount(db: Executor, account: StoredAccount): Promise<void> {
  const { id: _id, organization_id: _org, created_at: _created, ...changes } = toRow(account);
  await guardExternalId('account', () => db.updateTable('accounts').set(changes).where('organization_id', '=', account.organizationId).where('id', '=', account.id).execute());
}

/** The equality filters of `GET /accounts`: query parameter → column. */
export const ACCOUNT_FILTERS = { ownerId: 'owner_id', externalId: 'external_id' } as const;
export type AccountFilters = Partial<Record<keyof typeof ACCOUNT_FILTERS, string>>;

/** A page of accounts (live, or the trash) in the requested sort (db/list-page.ts). */
export async function listAccounts(db: Executor, dialect: Dialect, organizationId: string, filter: ContactFilter, filters: AccountFilters, request: ListRequest, view: TrashView = 'live', fields: readonly FieldFilter[] = []): Promise<ListPage<StoredAccount>> {
  const condition = contactFilterCondition(dialect, 'accounts', filter);
  let q = db.selectFrom('accounts').where(listScope(dialect, 'accounts.organization_id', organizationId, fields.some(namesFewItems))).where(contactViewCondition(dialect, 'accounts', filter, view));
  if (condition) q = q.where(condition);
  for (const c of [...equalityConditions('accounts', ACCOUNT_FILTERS, filters), ...timeRangeConditions('accounts', request.range)]) q = q.where(c);
  for (const f of fields) q = q.where(customFieldCondition(dialect, 'accounts', organizationId, f));
  const page = await readColumnPage<AccountsTable & { seq: number; deleted_at: string | null }>(q, 'accounts', request);
  return { rows: page.rows.map(toStored), pagination: page.pagination };
}

/** Which of `ids` are live accounts of the organization (for validating references in one query). */
export async function existingAccountIds(db: Executor, organizationId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('accounts').select('id').where('organization_id', '=', organizationId).where('id', 'in', [...ids]).where(inView('accounts', 'live')).execute();
  return new Set(rows.map((r) => r.id));
}
