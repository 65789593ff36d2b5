import type { Dialect } from '../../config.js';
import type { Executor } from '../../db/database.js';
import { insertRows } from '../../db/bulk-insert.js';
import { compiledForRows } from '../../db/compiled-rows.js';
import { precompile, precompileInsert } from '../../db/precompiled.js';
import type { LeadsTable } from '../../db/schema.js';
import { sql } from 'kysely';
import { sqliteFtsSearch, usesFtsIndex } from '../../db/search.js';
import type { ListRequest } from '../../lib/list-request.js';
import { columnPosition, equalityConditions, listScope, readColumnPage, timeRangeConditions, type ListPage } from '../../db/list-page.js';
import { paginate } from '../../lib/pagination.js';
import { contactFilterCondition, contactViewCondition, type ContactFilter } from '../shared/contact-query.js';
import { contactColumns } from '../../crypto/contact-fields.js';
import { inView, liveByRow, type TrashView } from '../../db/trash.js';
import { guardExternalId } from '../shared/external-id.js';
import { namesFewItems, type FieldFilter } from '../objects/record-filters.js';
import { customFieldCondition } from '../fields/custom-fields.store.js';
import { precompileInsertWithEvent } from '../events/outbox.store.js';
import type { CrmEvent } from '../events/events.js';

export const LEAD_ENCRYPTED_COLUMNS = contactColumns('leads', ['email', 'phone']);

/** A batch's rows per statement (at most 100 items), then smaller chunks for the rest: a few cached forms. */
const BULK_CHUNK_SIZES = [100, 25, 5, 1];

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
  externalId: string | null;
  /** Custom field values as stored (JSON, e-mails and phones sealed; modules/fields/custom-values.ts). */
  custom: string | null;
  createdAt: string;
  updatedAt: string;
  deletedAt: string | null;
}

type Row = Omit<LeadsTable, 'seq' | 'deleted_at'> & { seq: number; deleted_at: string | null };

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
  externalId: r.external_id,
  custom: r.custom,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  deletedAt: r.deleted_at,
});

/** The written columns: `deleted_at` only ever changes through db/trash.ts. */
function toRow(l: Omit<StoredLead, 'seq'>): Omit<LeadsTable, 'seq' | 'deleted_at'> {
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
    external_id: l.externalId,
    custom: l.custom,
    created_at: l.createdAt,
    updated_at: l.updatedAt,
  };
}

const LEAD_COLUMNS = [
  'id', 'organization_id', 'name', 'email_enc', 'email_bidx', 'phone_enc', 'phone_bidx', 'source', 'source_campaign',
  'status', 'company', 'title', 'notes', 'owner_id', 'account_id', 'duplicate_of', 'external_id', 'custom', 'created_at', 'updated_at',
] as const;
const insertLead = precompileInsert('leads', LEAD_COLUMNS);
const insertLeadAndEvent = precompileInsertWithEvent('leads', LEAD_COLUMNS);

/** Inserts new leads: an API create as one precompiled row, an import a few hundred rows per statement. */
export async function insertLeads(db: Executor, leads: Omit<StoredLead, 'seq'>[]): Promise<void> {
  await guardExternalId('lead', async () => {
    if (leads.length === 1) return insertLead(db, toRow(leads[0]!));
    await insertRows(db, 'leads', leads.map(toRow));
  });
}

/** One new lead and its lead.created event (the API's single create): one statement on PostgreSQL. */
export async function insertLeadWithEvent(db: Executor, lead: Omit<StoredLead, 'seq'>, event: CrmEvent): Promise<void> {
  await guardExternalId('lead', () => insertLeadAndEvent(db, toRow(lead), event));
}

const selectLead = (view: TrashView) =>
  precompile((db, organizationId: string, id: string) =>
    db.selectFrom('leads').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).where(inView('leads', view)),
  );
const selectLeadIn = { live: selectLead('live'), trash: selectLead('trash'), any: selectLead('any') };

/** One lead of the organization; a live one unless `view` says otherwise. */
export async function findLead(db: Executor, organizationId: string, id: string, view: TrashView = 'live'): Promise<StoredLead | undefined> {
  const [row] = await selectLeadIn[view](db, organizationId, id);
  return row && toStored(row as Row);
}

export async function updateLead(db: Executor, lead: StoredLead): Promise<void> {
  const { id: _id, organization_id: _org, created_at: _created, ...changes } = toRow(lead);
  await guardExternalId('lead', () => db.updateTable('leads').set(changes).where('organization_id', '=', lead.organizationId).where('id', '=', lead.id).execute());
}

/**
 * Live leads by id (ids are unique across organizations: the caller keeps its own), compiled once per chunk size.
 * Live is checked on the rows the id index finds (liveByRow): with the plain predicate, PostgreSQL before the
 * first statistics of a freshly filled table AND-ed a bitmap of the whole live index into the read of a batch's
 * upsert hits (100 leads among 100,000: 108,000 index entries, 2–6 ms); at 20,000 it read every row of the
 * organization and compared each with the 100 ids (41 ms).
 */
const liveLeadsById = compiledForRows(['id'] as const, (db, rows: { id: string }[]) =>
  db.selectFrom('leads').selectAll().where('id', 'in', rows.map((r) => r.id)).where(liveByRow('leads')),
  BULK_CHUNK_SIZES,
);

/** The live leads of the organization among `ids`, by id: one statement for a batch. */
export async function findLeads(db: Executor, organizationId: string, ids: readonly string[]): Promise<Map<string, StoredLead>> {
  const rows = await liveLeadsById(db, [...new Set(ids)].map((id) => ({ id })));
  return new Map(rows.filter((r) => r.organization_id === organizationId).map((r) => [r.id, toStored(r as Row)]));
}

/**
 * The columns a batch's bulk update writes (its leads keep their contacts, duplicate and external id): those
 * no index names always, the indexed ones only for the leads where they changed. SQLite rewrites every index
 * whose column (or partial-index condition) a SET list names, changed or not: an unchanged `status` in it cost
 * a random page of (status, organization_id) per lead, `name` also its trigram index by trigger.
 */
const PLAIN_COLUMNS = ['source', 'source_campaign', 'company', 'title', 'notes', 'owner_id', 'updated_at'] as const;
const INDEXED_COLUMNS = ['name', 'status', 'account_id'] as const;
type FieldColumn = (typeof PLAIN_COLUMNS)[number] | (typeof INDEXED_COLUMNS)[number];
type FieldRow = Pick<LeadsTable, 'id' | 'organization_id' | FieldColumn>;

/** One UPDATE … FROM (VALUES …) of `columns` for many leads; both databases name the VALUES columns column1, column2, … */
function fieldUpdate(columns: readonly FieldColumn[]) {
  return compiledForRows(['id', 'organization_id', ...columns] as const, (db, rows: FieldRow[]) => {
    const values = sql.join(rows.map((r) => sql`(${sql.join([r.id, r.organization_id, ...columns.map((c) => r[c])])})`));
    const set = sql.join(columns.map((c, i) => sql`${sql.ref(c)} = ${sql.ref(`v.column${i + 3}`)}`));
    const query = sql`update leads set ${set} from (values ${values}) as v where leads.id = v.column1 and leads.organization_id = v.column2`;
    return { compile: () => query.compile(db) };
  }, BULK_CHUNK_SIZES);
}

/** By the indexed columns it sets (their names joined), a compiled update: at most eight, made when first needed. */
const fieldUpdates = new Map<string, ReturnType<typeof fieldUpdate>>();

/**
 * Writes the fields of many updated leads (a batch; each with its row as read) whose contacts, duplicate and
 * external id are unchanged: one statement per set of indexed columns that changed, for as many leads as share it.
 */
export async function updateLeadFields(db: Executor, leads: readonly { lead: StoredLead; current: StoredLead }[]): Promise<void> {
  const groups = new Map<string, { columns: FieldColumn[]; rows: FieldRow[] }>();
  for (const { lead, current } of leads) {
    const row = toRow(lead);
    const before = toRow(current);
    const changed = INDEXED_COLUMNS.filter((c) => row[c] !== before[c]);
    const key = changed.join(',');
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { columns: [...changed, ...PLAIN_COLUMNS], rows: [] }));
    group.rows.push(row);
  }
  for (const [key, { columns, rows }] of groups) {
    let update = fieldUpdates.get(key);
    if (!update) fieldUpdates.set(key, (update = fieldUpdate(columns)));
    await update(db, rows);
  }
}

/** The equality filters of `GET /leads`: query parameter → column. */
export const LEAD_FILTERS = { status: 'status', source: 'source', sourceCampaign: 'source_campaign', ownerId: 'owner_id', accountId: 'account_id', externalId: 'external_id' } as const;
export type LeadFilters = Partial<Record<keyof typeof LEAD_FILTERS, string>>;

/**
 * A page of leads (live, or the trash) in the requested sort. A name search on SQLite with nothing else to
 * narrow it and the default order walks the trigram index newest first (bench/leads-search.ts); every other
 * list goes through the shared keyset reader (db/list-page.ts).
 */
export async function listLeads(db: Executor, dialect: Dialect, organizationId: string, filter: ContactFilter, filters: LeadFilters, request: ListRequest, view: TrashView = 'live', fields: readonly FieldFilter[] = []): Promise<ListPage<StoredLead>> {
  const narrowed = Object.values(filters).some((v) => v !== undefined) || Object.keys(request.range).length > 0 || fields.length > 0;
  if (filter.kind === 'name' && view === 'live' && !request.cursor && !narrowed && request.sort === '-createdAt' && usesFtsIndex(dialect, filter.contains)) {
    const { rows, total } = await sqliteFtsSearch<Row>(db, {
      table: 'leads',
      scopeIndex: 'leads_live_organization_seq',
      scope: sql`t.organization_id = ${organizationId} and ${inView('t', 'live')}`,
      q: filter.contains,
      limit: request.limit,
      offset: (request.page - 1) * request.limit,
    });
    const last = rows.at(-1);
    const cursor = last ? request.cursorAt(columnPosition<Row>(request.sort)(last)) : null;
    return { rows: rows.map(toStored), pagination: paginate(request, total, cursor) };
  }
  const condition = contactFilterCondition(dialect, 'leads', filter);
  const byReference = filters.accountId !== undefined || fields.some(namesFewItems);
  let q = db.selectFrom('leads').where(listScope(dialect, 'leads.organization_id', organizationId, byReference)).where(contactViewCondition(dialect, 'leads', filter, view));
  if (condition) q = q.where(condition);
  for (const c of [...equalityConditions('leads', LEAD_FILTERS, filters), ...timeRangeConditions('leads', request.range)]) q = q.where(c);
  for (const f of fields) q = q.where(customFieldCondition(dialect, 'leads', organizationId, f));
  const page = await readColumnPage<Row>(q, 'leads', request);
  return { rows: page.rows.map(toStored), pagination: page.pagination };
}

type ProbeColumn = 'email_bidx' | 'phone_bidx';
type ContactMatch = { id: string; seq: number; emailBidx: string | null; phoneBidx: string | null };
type ContactIndexes = { emailBidx: string | null; phoneBidx: string | null };

/**
 * The oldest lead holding `bidx` in `column`, older than `olderThanSeq`: one entry of the (bidx, seq) index.
 * No organization in the WHERE clause (see oldestHoldersOf: PostgreSQL without statistics then walks the
 * organization's whole index, 67 ms a probe at 40,000 leads); the blind index is bound to one organization
 * already, and the caller still keeps only rows of its own.
 */
function oldestHolding(db: Executor, column: ProbeColumn, bidx: string, olderThanSeq: number) {
  return (
    db
      .selectFrom('leads')
      .select(['id', 'seq', 'email_bidx', 'phone_bidx', 'organization_id'])
      .where(column, '=', bidx)
      .where('seq', '<', olderThanSeq)
      .where(liveByRow('leads'))
      .orderBy('seq')
      // A literal: with a bound LIMIT, SQLite's plan costs about three times as much here.
      .limit(sql.lit(1))
  );
}

/** One probe on its own (an update): compiled once per column. */
const singleProbe = {
  email_bidx: precompile((db, bidx: string, olderThanSeq: number) => oldestHolding(db, 'email_bidx', bidx, olderThanSeq)),
  phone_bidx: precompile((db, bidx: string, olderThanSeq: number) => oldestHolding(db, 'phone_bidx', bidx, olderThanSeq)),
};

/**
 * The oldest lead of the organization sharing the e-mail or phone index (duplicate detection), among
 * leads created before `olderThanSeq` (all existing leads when omitted).
 */
export async function findOldestDuplicate(db: Executor, organizationId: string, contacts: ContactIndexes, olderThanSeq = Number.MAX_SAFE_INTEGER): Promise<string | null> {
  const found = [];
  if (contacts.emailBidx !== null) found.push(...(await singleProbe.email_bidx(db, contacts.emailBidx, olderThanSeq)));
  if (contacts.phoneBidx !== null) found.push(...(await singleProbe.phone_bidx(db, contacts.phoneBidx, olderThanSeq)));
  const [oldest] = found.filter((r) => r.organization_id === organizationId).sort((a, b) => a.seq - b.seq);
  return oldest?.id ?? null;
}

/**
 * Probes per statement, then smaller chunks for the rest (bound values: SQLite allows 32,766, PostgreSQL 65,535).
 * 100 for a batch's upsert keys (its maximum size): in two chunks of 50 they cost two more round trips a batch.
 */
const PROBE_CHUNK_SIZES = [500, 100, 25, 5, 1];

/**
 * Per column, one statement finds the oldest holder's seq of every index in a VALUES list, each a single
 * entry of the (bidx, seq) index; compiled once per chunk size, since Kysely building a statement of 1,000
 * probes cost more than SQLite answering it (an import probes two indexes per row). The probe names no
 * organization: a blind index is already bound to one (its HMAC covers the organization id), and with
 * `organization_id =` in it PostgreSQL, before it has statistics on a freshly filled table, walked the whole
 * (organization_id, seq) index for every probe.
 */
function oldestHoldersOf(column: ProbeColumn) {
  return compiledForRows(
    ['bidx'] as const,
    (db, probes: { bidx: string }[]) => {
      const query = sql<{ seq: number | null }>`select (select o.seq from leads o where ${sql.ref(`o.${column}`)} = probe.column1 and ${liveByRow('o')} order by o.seq limit 1) as seq
        from (values ${sql.join(probes.map((p) => sql`(${p.bidx})`))}) as probe`;
      return { compile: () => query.compile(db) };
    },
    PROBE_CHUNK_SIZES,
  );
}

const oldestHolders = { email_bidx: oldestHoldersOf('email_bidx'), phone_bidx: oldestHoldersOf('phone_bidx') };

/** An API create with an e-mail and a phone: both probes of oldestHoldersOf in one statement (one round trip). */
const oldestHoldersOfPair = compiledForRows(
  ['email', 'phone'] as const,
  (db, [probe]: { email: string; phone: string }[]) => {
    const query = sql<{ seq: number | null }>`select (select o.seq from leads o where o.email_bidx = ${probe!.email} and ${liveByRow('o')} order by o.seq limit 1) as seq
      union all select (select o.seq from leads o where o.phone_bidx = ${probe!.phone} and ${liveByRow('o')} order by o.seq limit 1)`;
    return { compile: () => query.compile(db) };
  },
  [1],
);

async function oldestHolderSeqs(db: Executor, contacts: readonly ContactIndexes[]): Promise<{ seq: number | null }[]> {
  const probesOf = (indexes: (string | null)[]) => [...new Set(indexes)].flatMap((bidx) => (bidx === null ? [] : [{ bidx }]));
  const emails = probesOf(contacts.map((c) => c.emailBidx));
  const phones = probesOf(contacts.map((c) => c.phoneBidx));
  if (emails.length === 1 && phones.length === 1) return oldestHoldersOfPair(db, [{ email: emails[0]!.bidx, phone: phones[0]!.bidx }]);
  return [...(await oldestHolders.email_bidx(db, emails)), ...(await oldestHolders.phone_bidx(db, phones))];
}

/** The leads with the given seqs (primary key), whatever their organization: the caller keeps its own. */
const leadsBySeq = compiledForRows(
  ['seq'] as const,
  (db, rows: { seq: number }[]) => db.selectFrom('leads').select(['id', 'seq', 'email_bidx', 'phone_bidx', 'organization_id']).where('seq', 'in', rows.map((r) => r.seq)),
  PROBE_CHUNK_SIZES,
);

/**
 * For every e-mail and phone index of the given contacts, the oldest lead of the organization holding it,
 * oldest first. Each probe reads one index entry, so the cost does not grow with the number of leads that
 * share an address.
 */
export async function findContactMatches(db: Executor, organizationId: string, contacts: readonly ContactIndexes[]): Promise<ContactMatch[]> {
  const seqs = new Set<number>();
  for (const { seq } of await oldestHolderSeqs(db, contacts)) if (seq !== null) seqs.add(seq);
  if (seqs.size === 0) return [];
  const rows = await leadsBySeq(db, [...seqs].map((seq) => ({ seq })));
  return rows
    .filter((r) => r.organization_id === organizationId)
    .map((r) => ({ id: r.id, seq: r.seq, emailBidx: r.email_bidx, phoneBidx: r.phone_bidx }))
    .sort((a, b) => a.seq - b.seq);
}

/** Which of `ids` are live leads of the organization (for validating references in one query). */
export async function existingLeadIds(db: Executor, organizationId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('leads').select('id').where('organization_id', '=', organizationId).where('id', 'in', [...ids]).where(inView('leads', 'live')).execute();
  return new Set(rows.map((r) => r.id));
}
