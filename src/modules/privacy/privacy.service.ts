import type { Transaction } from 'kysely';
import type { AppContext } from '../../context.js';
import type { DB } from '../../db/schema.js';
import { normalizeContacts } from '../../crypto/contact-fields.js';
import { forgetEverywhere } from '../../crypto/plaintext-eviction.js';
import type { Executor } from '../../db/database.js';
import { inTransaction } from '../../db/transaction.js';
import { truncateWal } from '../../db/wal.js';
import { validationFailed, type FieldError } from '../../errors.js';
import { nationalDigits } from '../../lib/contact.js';
import { newId } from '../../lib/ids.js';
import { listRequest } from '../../lib/list-request.js';
import { listCursors } from '../../crypto/list-cursors.js';
import { buildEvent, type CrmEvent, type EventType } from '../events/events.js';
import { recordEvents } from '../events/outbox.store.js';
import { unindexRecords } from '../objects/record-search.store.js';
import type { Caller } from '../shared/caller.js';
import { attachedTo } from '../shared/attached.store.js';
import { purgeAttached } from '../shared/trash.service.js';
import { indexEarlierRecords } from './backfill.js';
import { customContactKeysOf } from '../fields/custom-fields.service.js';
import { deleteHolders, findHolders, insertErasure, listErasures as listStored, type ErasureRow, type Holders } from './privacy.store.js';
import { removeDerived } from './derived.service.js';
import type { Erasure, ErasureBody, ListErasuresQuery, SubjectQuery } from './privacy.schemas.js';

type Ctx = Pick<AppContext, 'database' | 'cipher' | 'blindIndex' | 'clock' | 'outbox'>;

/** The value, normalized exactly as lead contact fields are, as blind indexes of the organization. */
export function subjectIndexes(ctx: Pick<Ctx, 'blindIndex'>, organizationId: string, q: SubjectQuery): { emailBidx: string | null; phoneBidx: string | null } {
  if (q.email === undefined && q.phoneNumber === undefined) {
    throw validationFailed([{ field: 'email', code: 'required', message: 'is required, or a phone number (send one or both)' }]);
  }
  const normalized = normalizeContacts(q);
  return {
    emailBidx: normalized.email ? ctx.blindIndex.compute('email', organizationId, normalized.email) : null,
    phoneBidx: normalized.phoneNumber ? ctx.blindIndex.compute('phone', organizationId, normalized.phoneNumber) : null,
  };
}

export const bidxList = (s: { emailBidx: string | null; phoneBidx: string | null }): string[] => [s.emailBidx, s.phoneBidx].filter((b): b is string => b !== null);

/** The digits of every run a person would write a phone number as (+1 415 555-0142, (415) 555 0142). */
const digitRuns = (text: string): string[] => (text.match(/\+?\d[\d\s().-]*\d/g) ?? []).map((run) => run.replace(/\D/g, ''));

/**
 * The reason is kept in clear with the receipt, which names the person only by fingerprints: it may not repeat
 * the e-mail or the phone number being erased (in any case or spacing, with or without the country code).
 */
function reasonErrors(reason: string | undefined, subject: { email?: string | null; phoneNumber?: string | null }): FieldError[] {
  if (reason === undefined) return [];
  const email = subject.email ? reason.toLowerCase().includes(subject.email) : false;
  const phone = subject.phoneNumber ? digitRuns(reason).some((run) => run.includes(nationalDigits(subject.phoneNumber!))) : false;
  if (!email && !phone) return [];
  const named = [email ? 'e-mail' : null, phone ? 'phone number' : null].filter(Boolean).join(' and ');
  return [{ field: 'reason', code: 'not_allowed', message: `must not contain the ${named} being erased: the receipt keeps only fingerprints of it; give a ticket reference instead` }];
}

/** The holders in the order they were found, tagged for the events. */
const erasedEvents = (caller: Caller, h: Holders, now: Date): CrmEvent[] => {
  const event = (type: EventType, object: string, objectId: string, label: string, objectSlug?: string) =>
    buildEvent({ type, organizationId: caller.organizationId, object, objectId, objectSlug, description: `${label} erased`, changes: { before: {}, after: {} }, actor: caller.actor, now });
  return [
    ...h.leads.map((id) => event('lead.erased', 'lead', id, 'Lead')),
    ...h.accounts.map((id) => event('account.erased', 'account', id, 'Account')),
    ...h.deals.map((id) => event('deal.erased', 'deal', id, 'Deal')),
    // A record's address is its object's slug and its id, as in every record event (the slug names no person).
    ...h.records.map((r) => event('record.erased', 'record', r.id, 'Record', r.objectSlug)),
  ];
};

/** Removes the items' search entries (SQLite per-object FTS tables), one statement per object. */
async function unindex(ctx: Pick<Ctx, 'database'>, trx: Executor, h: Holders): Promise<void> {
  const byObject = new Map<number, number[]>();
  for (const r of h.records) byObject.set(r.objectSeq, [...(byObject.get(r.objectSeq) ?? []), r.seq]);
  for (const [objectSeq, seqs] of byObject) await unindexRecords(trx, ctx.database.dialect, objectSeq, seqs);
}

const toErasure = (r: ErasureRow): Erasure => ({
  id: r.id,
  status: 'completed',
  matched: { leads: r.matched_leads, accounts: r.matched_accounts, deals: r.matched_deals, records: r.matched_records },
  reason: r.reason,
  requestedAt: r.requested_at,
  completedAt: r.completed_at,
});

/**
 * Erases, in one transaction, every lead, account, deal and record of the organization holding the e-mail or
 * phone (trashed or not; deals through their custom e-mail and phone fields) with everything derived from them
 * that could name the person: the notes and tasks on them, the events describing all of these and their webhook
 * deliveries, stored idempotent responses, reminders, search, contact-index and custom-value entries.
 * The receipt keeps the blind indexes and the counts. Then every thread's decryption cache is dropped and,
 * on SQLite, the WAL is emptied into the (secure_delete) database file.
 */
export function eraseSubject(ctx: Ctx, caller: Caller, body: ErasureBody): Promise<Erasure> {
  return eraseSubjectWith(ctx, caller, body, (erase) => inTransaction(ctx, erase));
}

/**
 * eraseSubject with its transaction run by `run`: the API route's runs it under the request's Idempotency-Key,
 * and answers a retry with the stored receipt instead of running it again.
 */
export async function eraseSubjectWith<T>(ctx: Ctx, caller: Caller, body: ErasureBody, run: (erase: (trx: Transaction<DB>) => Promise<Erasure>) => Promise<T>): Promise<T> {
  const subject = subjectIndexes(ctx, caller.organizationId, body);
  const reason = reasonErrors(body.reason, normalizeContacts(body));
  if (reason.length) throw validationFailed(reason);
  const requestedAt = ctx.clock.now().toISOString();
  await indexEarlierRecords(ctx);
  const result = await run(async (trx) => {
    const holders = await findHolders(trx, caller.organizationId, bidxList(subject), await customContactKeysOf(ctx, trx, caller.organizationId));
    const ids = [...holders.leads, ...holders.accounts, ...holders.deals, ...holders.records.map((r) => r.id)];
    // Notes and tasks on the erased items are personal data too: their events, stored responses and reminders go first.
    const attached = await attachedTo(trx, caller.organizationId, ids);
    await removeDerived(ctx, trx, caller.organizationId, [...ids, ...attached.notes, ...attached.tasks]);
    await unindex(ctx, trx, holders);
    await deleteHolders(trx, caller.organizationId, holders);
    const now = ctx.clock.now();
    await recordEvents(trx, erasedEvents(caller, holders, now));
    await purgeAttached(trx, caller.organizationId, ids, caller.actor, now);
    const erasure: ErasureRow = {
      id: newId(now),
      organization_id: caller.organizationId,
      email_bidx: subject.emailBidx,
      phone_bidx: subject.phoneBidx,
      reason: body.reason ?? null,
      matched_leads: holders.leads.length,
      matched_accounts: holders.accounts.length,
      matched_deals: holders.deals.length,
      matched_records: holders.records.length,
      actor: JSON.stringify(caller.actor),
      requested_at: requestedAt,
      completed_at: now.toISOString(),
    };
    await insertErasure(trx, erasure);
    return toErasure(erasure);
  });
  forgetEverywhere(ctx.cipher);
  await truncateWal(ctx.database);
  return result;
}

export async function listErasures(ctx: Pick<AppContext, 'database' | 'cursorSeal'>, organizationId: string, query: ListErasuresQuery) {
  const { rows, pagination } = await listStored(ctx.database.db, organizationId, listRequest(query, listCursors(ctx, organizationId)));
  return { erasures: rows.map(toErasure), pagination };
}
