import type { Dialect } from '../../config.js';
import type { Executor } from '../../db/database.js';
import type { AccountsTable } from '../../db/schema.js';
import { offsetOf, type PageRequest } from '../../lib/pagination.js';
import { contactFilterCondition, type ContactFilter } from '../shared/contact-query.js';
import { contactColumns } from '../../crypto/contact-fields.js';

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
  createdAt: string;
  updatedAt: string;
}

type Row = Omit<AccountsTable, 'seq'> & { seq: number };

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
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

function toRow(a: Omit<StoredAccount, 'seq'>): Omit<AccountsTable, 'seq'> {
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
    created_at: a.createdAt,
    updated_at: a.updatedAt,
  };
}

export async function insertAccount(db: Executor, account: Omit<StoredAccount, 'seq'>): Promise<void> {
  await db.insertInto('accounts').values(toRow(account)).execute();
}

export async function findAccount(db: Executor, organizationId: string, id: string): Promise<StoredAccount | undefined> {
  const row = await db.selectFrom('accounts').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  return row && toStored(row);
}

export async function updateAccount(db: Executor, account: StoredAccount): Promise<void> {
  const { id: _id, organization_id: _org, created_at: _created, ...changes } = toRow(account);
  await db.updateTable('accounts').set(changes).where('organization_id', '=', account.organizationId).where('id', '=', account.id).execute();
}

/** A page of accounts, newest first, with the total count of the filter. */
export async function listAccounts(db: Executor, dialect: Dialect, organizationId: string, filter: ContactFilter, page: PageRequest) {
  const condition = contactFilterCondition(dialect, 'accounts', filter);
  let q = db.selectFrom('accounts').where('accounts.organization_id', '=', organizationId);
  if (condition) q = q.where(condition);
  const [rows, count] = await Promise.all([
    q.selectAll().orderBy('accounts.seq', 'desc').limit(page.limit).offset(offsetOf(page)).execute(),
    q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { accounts: rows.map(toStored), total: Number(count.n) };
}

/** Which of `ids` are accounts of the organization (for validating references in one query). */
export async function existingAccountIds(db: Executor, organizationId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('accounts').select('id').where('organization_id', '=', organizationId).where('id', 'in', [...ids]).execute();
  return new Set(rows.map((r) => r.id));
}
