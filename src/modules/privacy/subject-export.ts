import type { AppContext } from '../../context.js';
import { openContact } from '../../crypto/contact-fields.js';
import type { Account } from '../accounts/accounts.schemas.js';
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
import { accountRows, eventsNaming, findHolders, leadRows, recordRows, type EventRef } from './privacy.store.js';
import { bidxList, subjectIndexes } from './privacy.service.js';
import { customContactKeysOf, customFieldsOf } from '../fields/custom-fields.service.js';
import { openCustom, presentCustom } from '../fields/custom-values.js';
import type { SubjectQuery } from './privacy.schemas.js';

type Ctx = Pick<AppContext, 'database' | 'cipher' | 'blindIndex'>;

/**
 * Columns that never leave the server: keys, blind indexes, ciphertexts and the sealed custom values (both shown
 * decrypted instead), derived text.
 */
const INTERNAL = new Set(['seq', 'organization_id', 'email_enc', 'email_bidx', 'phone_enc', 'phone_bidx', 'search_text', 'custom']);
const camel = (column: string) => column.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/**
 * Lead or account rows in their API shape: every column but the internal ones, camel-cased (so a column added
 * later, such as the trash's deleted_at, appears as deletedAt without a change here), contacts decrypted, then
 * their custom values (contract §9), decrypted, as GET shows them.
 */
async function presentRows(ctx: Ctx, organizationId: string, table: 'leads' | 'accounts', rows: Record<string, unknown>[]): Promise<Record<string, unknown>[]> {
  const c = await customFieldsOf(ctx, ctx.database.db, organizationId, table);
  return rows.map((row) => {
    const id = String(row.id);
    const out: Record<string, unknown> = Object.fromEntries(Object.entries(row).filter(([k]) => !INTERNAL.has(k)).map(([k, v]) => [camel(k), v]));
    out.email = openContact(ctx, 'email', { table, rowId: id }, (row.email_enc as string | null) ?? null);
    out.phoneNumber = openContact(ctx, 'phone', { table, rowId: id }, (row.phone_enc as string | null) ?? null);
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
  records: RecordView[];
  /** The notes and tasks on those items (trashed ones too), decrypted. */
  notes: Note[];
  tasks: Task[];
  events: EventRef[];
}

/**
 * The access-request file (GDPR Art. 15/20): every lead, account and record of the organization holding the
 * e-mail or phone, trashed or not, decrypted with their custom values, the notes and tasks on them, and the
 * events naming them (ids, types, times; not bodies).
 */
export async function exportSubject(ctx: Ctx, organizationId: string, q: SubjectQuery): Promise<SubjectFile> {
  const bidxs = bidxList(subjectIndexes(ctx, organizationId, q));
  await indexEarlierRecords(ctx);
  const db = ctx.database.db;
  const holders = await findHolders(db, organizationId, bidxs, await customContactKeysOf(ctx, db, organizationId));
  const ids = [...holders.leads, ...holders.accounts, ...holders.records.map((r) => r.id)];
  const [leads, accounts, records, notes, tasks] = await Promise.all([
    leadRows(db, organizationId, holders.leads),
    accountRows(db, organizationId, holders.accounts),
    recordRows(db, organizationId, holders.records.map((r) => r.id)),
    notesOn(db, organizationId, ids),
    tasksOn(db, organizationId, ids),
  ]);
  return {
    // The same columns as the Lead and Account schemas, plus any added since (see presentRows).
    leads: (await presentRows(ctx, organizationId, 'leads', leads)) as Lead[],
    accounts: (await presentRows(ctx, organizationId, 'accounts', accounts)) as Account[],
    records: await presentRecords(ctx, records),
    notes: notes.map((n) => toNote(ctx, n)),
    tasks: tasks.map(toTask),
    events: await eventsNaming(db, organizationId, [...ids, ...notes.map((n) => n.id), ...tasks.map((t) => t.id)]),
  };
}
