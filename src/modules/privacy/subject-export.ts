import type { AppContext } from '../../context.js';
import { openContact } from '../../crypto/contact-fields.js';
import type { Account } from '../accounts/accounts.schemas.js';
import type { Deal } from '../deals/deals.schemas.js';
import { formatDateOnly } from '../../lib/dates.js';
import type { Lead } from '../leads/leads.schemas.js';
import { findObjectById } from '../objects/objects.store.js';
import { toRecordView, type RecordView } from '../objects/records.service.js';
import type { StoredObject } from '../objects/objects.store.js';
import type { StoredRecord } from '../objects/records.store.js';
import { indexEarlierRecords } from './backfill.js';
import type { Note } from '../notes/notes.schemas.js';
import { toNote } from '../notes/notes.service.js';
import { notesOn } from '../notes/notes.store.js';
import type { Task } from '../tasks/tasks.schemas.js';
import { toTask } from '../tasks/tasks.service.js';
import { tasksOn } from '../tasks/tasks.store.js';
import { accountRows, dealRows, eventsNaming, findHolders, leadRows, recordRows, type EventRef } from './privacy.store.js';
import { bidxList, subjectIndexes } from './privacy.service.js';
import { customContactKeysOf, customFieldsOf } from '../fields/custom-fields.service.js';
import { openCustom, presentCustom } from '../fields/custom-values.js';
import type { BuiltinResource } from '../fields/builtin-resources.js';
import type { SubjectQuery } from './privacy.schemas.js';

type Ctx = Pick<AppContext, 'database' | 'cipher' | 'blindIndex'>;

/**
 * Columns that never leave the server: keys, blind indexes, ciphertexts and the sealed custom values (both shown
 * decrypted instead), derived text.
 */
const INTERNAL = new Set(['seq', 'organization_id', 'email_enc', 'email_bidx', 'phone_enc', 'phone_bidx', 'search_text', 'custom']);
/** Calendar days, stored 'YYYY-MM-DD', which the API shows as midnight UTC. */
const DATE_ONLY = new Set(['expected_close_date']);
const camel = (column: string) => column.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/**
 * A lead, account or deal row in its API shape: every column but the internal ones, camel-cased (so a column
 * added later, such as the trash's deleted_at, appears as deletedAt without a change here), contacts decrypted,
 * then its custom values (contract §9), decrypted, as GET shows them.
 */
async function presentRows(ctx: Ctx, organizationId: string, table: BuiltinResource, rows: Record<string, unknown>[]): Promise<Record<string, unknown>[]> {
  const c = await customFieldsOf(ctx, ctx.database.db, organizationId, table);
  return rows.map((row) => {
    const id = String(row.id);
    const out: Record<string, unknown> = Object.fromEntries(
      Object.entries(row)
        .filter(([k]) => !INTERNAL.has(k))
        .map(([k, v]) => [camel(k), DATE_ONLY.has(k) && typeof v === 'string' ? formatDateOnly(v) : v]),
    );
    // Deals have no standard e-mail or phone.
    if (table !== 'deals') {
      out.email = openContact(ctx, 'email', { table, rowId: id }, (row.email_enc as string | null) ?? null);
      out.phoneNumber = openContact(ctx, 'phone', { table, rowId: id }, (row.phone_enc as string | null) ?? null);
    }
    return { ...out, ...presentCustom(c, openCustom(ctx.cipher, c, id, (row.custom as string | null) ?? null)) };
  });
}

async function presentRecords(ctx: Ctx, records: StoredRecord[]): Promise<RecordView[]> {
  const objects = new Map<string, StoredObject | undefined>();
  for (const id of new Set(records.map((r) => r.objectId))) objects.set(id, await findObjectById(ctx.database.db, id));
  return records.map((r) => toRecordView(ctx, objects.get(r.objectId)!, r));
}

export interface SubjectFile {
  leads: Lead[];
  accounts: Account[];
  deals: Deal[];
  records: RecordView[];
  /** The notes and tasks on those items (trashed ones too), decrypted. */
  notes: Note[];
  tasks: Task[];
  events: EventRef[];
}

/**
 * The access-request file (GDPR Art. 15/20): every lead, account, deal and record of the organization holding
 * the e-mail or phone (the items an erasure removes), trashed or not, decrypted with their custom values, the
 * notes and tasks on them, and the events naming them (ids, types, times; not bodies).
 */
export async function exportSubject(ctx: Ctx, organizationId: string, q: SubjectQuery): Promise<SubjectFile> {
  const bidxs = bidxList(subjectIndexes(ctx, organizationId, q));
  await indexEarlierRecords(ctx);
  const db = ctx.database.db;
  const holders = await findHolders(db, organizationId, bidxs, await customContactKeysOf(ctx, db, organizationId));
  const ids = [...holders.leads, ...holders.accounts, ...holders.deals, ...holders.records.map((r) => r.id)];
  const [leads, accounts, deals, records, notes, tasks] = await Promise.all([
    leadRows(db, organizationId, holders.leads),
    accountRows(db, organizationId, holders.accounts),
    dealRows(db, organizationId, holders.deals),
    recordRows(db, organizationId, holders.records.map((r) => r.id)),
    notesOn(db, organizationId, ids),
    tasksOn(db, organizationId, ids),
  ]);
  return {
    // The same columns as the Lead, Account and Deal schemas, plus any added since (see presentRows).
    leads: (await presentRows(ctx, organizationId, 'leads', leads)) as Lead[],
    accounts: (await presentRows(ctx, organizationId, 'accounts', accounts)) as Account[],
    deals: (await presentRows(ctx, organizationId, 'deals', deals)) as Deal[],
    records: await presentRecords(ctx, records),
    notes: notes.map((n) => toNote(ctx, n)),
    tasks: tasks.map(toTask),
    events: await eventsNaming(db, organizationId, [...ids, ...notes.map((n) => n.id), ...tasks.map((t) => t.id)]),
  };
}
