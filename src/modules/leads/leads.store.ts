import type { Dialect } from '../../config.js';
import type { Executor } from '../../db/database.js';
import { precompile } from '../../db/precompiled.js';
import type { LeadsTable } from '../../db/schema.js';
import { sql } from 'kysely';
import { sqliteFtsSearch, substringMatch, usesFtsIndex } from '../../db/search.js';
import { offsetOf, type PageRequest } from '../../lib/pagination.js';
import { contactColumns } from '../../crypto/contact-fields.js';

export const LEAD_ENCRYPTED_COLUMNS = contactColumns('leads', ['email', 'phone']);

/** A lead as stored: contact fields still encrypted. */
export interface StoredLead {
  seq: number;
  id: string;
  organizationId: string;
  name: string;
  emailEnc: string | null;
  emailBidx: string | null;
  phoneEnc: string | null;
  phoneBidx: string | null;
  source: string | null;
  sourceCampaign: string | null;
  status: string;
  company: string | null;
  title: string | null;
  notes: string | null;
  ownerId: string | null;
  accountId: string | null;
  duplicateOf: string | null;
  createdAt: string;
  updatedAt: string;
}

type Row = Omit<LeadsTable, 'seq'> & { seq: number };

const toStored = (r: Row): StoredLead => ({
  seq: r.seq,
  id: r.id,
  organizationId: r.organization_id,
  name: r.name,
  emailEnc: r.email_enc,
  emailBidx: r.email_bidx,
  phoneEnc: r.phone_enc,
  phoneBidx: r.phone_bidx,
  source: r.source,
  sourceCampaign: r.source_campaign,
  status: r.status,
  company: r.company,
  title: r.title,
  notes: r.notes,
  ownerId: r.owner_id,
  accountId: r.account_id,
  duplicateOf: r.duplicate_of,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

function toRow(l: Omit<StoredLead, 'seq'>): Omit<LeadsTable, 'seq'> {
  return {
    id: l.id,
    organization_id: l.organizationId,
    name: l.name,
    email_enc: l.emailEnc,
    email_bidx: l.emailBidx,
    phone_enc: l.phoneEnc,
    phone_bidx: l.phoneBidx,
    source: l.source,
    source_campaign: l.sourceCampaign,
    status: l.status,
    company: l.company,
    title: l.title,
    notes: l.notes,
    owner_id: l.ownerId,
    account_id: l.accountId,
    duplicate_of: l.duplicateOf,
    created_at: l.createdAt,
    updated_at: l.updatedAt,
  };
}

export async function insertLead(db: Executor, lead: Omit<StoredLead, 'seq'>): Promise<void> {
  await db.insertInto('leads').values(toRow(lead)).execute();
}

/** Bulk insert for imports and benchmark seeding: one statement per chunk. */
export async function insertLeads(db: Executor, leads: Omit<StoredLead, 'seq'>[]): Promise<void> {
  const CHUNK = 500;
  for (let i = 0; i < leads.length; i += CHUNK) {
    await db.insertInto('leads').values(leads.slice(i, i + CHUNK).map(toRow)).execute();
  }
}

const selectLead = precompile((db, organizationId: string, id: string) =>
  db.selectFrom('leads').selectAll().where('organization_id', '=', organizationId).where('id', '=', id),
);

export async function findLead(db: Executor, organizationId: string, id: string): Promise<StoredLead | undefined> {
  const [row] = await selectLead(db, organizationId, id);
  return row && toStored(row);
}

export async function updateLead(db: Executor, lead: StoredLead): Promise<void> {
  const { id: _id, organization_id: _org, created_at: _created, ...changes } = toRow(lead);
  await db.updateTable('leads').set(changes).where('organization_id', '=', lead.organizationId).where('id', '=', lead.id).execute();
}

export type LeadFilter =
  | { kind: 'all' }
  | { kind: 'email'; bidx: string }
  | { kind: 'phone'; bidx: string }
  | { kind: 'name'; contains: string };

/** A page of leads, newest first, with the total count of the filter. */
export async function listLeads(db: Executor, dialect: Dialect, organizationId: string, filter: LeadFilter, page: PageRequest) {
  if (filter.kind === 'name' && usesFtsIndex(dialect, filter.contains)) {
    const { rows, total } = await sqliteFtsSearch<Row>(db, {
      table: 'leads',
      scopeIndex: 'leads_org_seq',
      scope: sql`t.organization_id = ${organizationId}`,
      q: filter.contains,
      limit: page.limit,
      offset: offsetOf(page),
    });
    return { leads: rows.map(toStored), total };
  }
  let q = db.selectFrom('leads').where('leads.organization_id', '=', organizationId);
  if (filter.kind === 'email') q = q.where('leads.email_bidx', '=', filter.bidx);
  if (filter.kind === 'phone') q = q.where('leads.phone_bidx', '=', filter.bidx);
  if (filter.kind === 'name') q = q.where(substringMatch(dialect, 'leads', 'name', filter.contains));
  const [rows, count] = await Promise.all([
    q.selectAll().orderBy('leads.seq', 'desc').limit(page.limit).offset(offsetOf(page)).execute(),
    q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
  ]);
  return { leads: rows.map(toStored), total: Number(count.n) };
}

/**
 * The oldest lead of the organization sharing the e-mail or phone index (duplicate detection), among
 * leads created before `olderThanSeq` (all existing leads when omitted, i.e. before an insert).
 */
export async function findOldestDuplicate(
  db: Executor,
  organizationId: string,
  contacts: { emailBidx: string | null; phoneBidx: string | null },
  olderThanSeq?: number,
): Promise<string | null> {
  const candidates = await Promise.all(
    (
      [
        ['email_bidx', contacts.emailBidx],
        ['phone_bidx', contacts.phoneBidx],
      ] as const
    )
      .filter(([, value]) => value !== null)
      .map(([column, value]) =>
        db
          .selectFrom('leads')
          .select(['id', 'seq'])
          .where(column, '=', value)
          .where('organization_id', '=', organizationId)
          .$if(olderThanSeq !== undefined, (qb) => qb.where('seq', '<', olderThanSeq!))
          .orderBy('seq', 'asc')
          .limit(1)
          .executeTakeFirst(),
      ),
  );
  const oldest = candidates.filter((c) => c !== undefined).sort((a, b) => a!.seq - b!.seq)[0];
  return oldest?.id ?? null;
}
