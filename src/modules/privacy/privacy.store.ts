import type { Executor } from '../../db/database.js';
import { toStored, type StoredRecord } from '../objects/records.store.js';
import type { PrivacyErasuresTable } from '../../db/schema.js';
import type { ListRequest } from '../../lib/list-request.js';
import { CREATION_ORDER, readColumnPage, timeRangeConditions, type ListPage } from '../../db/list-page.js';
import type { BuiltinResource } from '../fields/builtin-resources.js';

/*
 * The SQL of erasure and export. Nothing here looks at deleted_at: an erasure removes an item whether or not
 * it is in the trash, and an export shows trashed items too.
 */

const CHUNK = 500;
const chunks = <T>(items: readonly T[]): T[][] => Array.from({ length: Math.ceil(items.length / CHUNK) }, (_, i) => items.slice(i * CHUNK, (i + 1) * CHUNK));

export interface Holders {
  leads: string[];
  accounts: string[];
  deals: string[];
  /** With what removing their search entries needs: their seq and their object's seq. */
  records: { id: string; seq: number; objectId: string; objectSeq: number; objectSlug: string }[];
}

/** The keys of the custom e-mail and phone fields of leads, accounts and deals, whose blind indexes item_values holds. */
export type CustomContactKeys = Record<BuiltinResource, readonly string[]>;

/**
 * Every lead, account, deal and record of the organization holding one of the blind indexes `bidxs`: leads and
 * accounts in a standard contact field or a custom e-mail or phone field, deals (which have no standard one) in
 * a custom field, records in a field of their object.
 */
export async function findHolders(db: Executor, organizationId: string, bidxs: readonly string[], custom: CustomContactKeys): Promise<Holders> {
  // The items of `resource` whose custom contact fields hold a value (item_values keeps trashed items' values too).
  const inCustomField = (resource: BuiltinResource) =>
    db.selectFrom('item_values').select('item_id').where('organization_id', '=', organizationId).where('resource', '=', resource).where('field_key', 'in', [...custom[resource]]).where('text_value', 'in', bidxs);
  const holding = (table: 'leads' | 'accounts') =>
    db
      .selectFrom(table)
      .select('id')
      .where('organization_id', '=', organizationId)
      .where((eb) => eb.or([eb('email_bidx', 'in', bidxs), eb('phone_bidx', 'in', bidxs), ...(custom[table].length ? [eb('id', 'in', inCustomField(table))] : [])]))
      .orderBy('seq')
      .execute();
  const holdingDeals = async () =>
    custom.deals.length ? db.selectFrom('deals').select('id').where('organization_id', '=', organizationId).where('id', 'in', inCustomField('deals')).orderBy('seq').execute() : [];
  const [leads, accounts, deals, records] = await Promise.all([
    holding('leads'),
    holding('accounts'),
    holdingDeals(),
    db
      .selectFrom('record_contacts as c')
      .innerJoin('records as r', 'r.id', 'c.record_id')
      .innerJoin('custom_objects as o', 'o.id', 'r.object_id')
      .select(['r.id', 'r.seq', 'r.object_id', 'o.seq as object_seq', 'o.slug as object_slug'])
      .distinct()
      .where('c.bidx', 'in', bidxs)
      .where('c.organization_id', '=', organizationId)
      .where('r.organization_id', '=', organizationId)
      .orderBy('r.seq')
      .execute(),
  ]);
  return {
    leads: leads.map((r) => r.id),
    accounts: accounts.map((r) => r.id),
    deals: deals.map((r) => r.id),
    records: records.map((r) => ({ id: r.id, seq: Number(r.seq), objectId: r.object_id, objectSeq: Number(r.object_seq), objectSlug: r.object_slug })),
  };
}

export interface EventRef {
  id: string;
  type: string;
  object: string;
  objectId: string;
  createdAt: string;
}

/** The events of the organization that name one of `ids` (the item they describe), oldest first. */
export async function eventsNaming(db: Executor, organizationId: string, ids: readonly string[]): Promise<EventRef[]> {
  const out: EventRef[] = [];
  for (const part of chunks(ids)) {
    const rows = await db
      .selectFrom('events')
      .select(['id', 'type', 'object', 'object_id', 'created_at', 'seq'])
      .where('organization_id', '=', organizationId)
      .where('object_id', 'in', part)
      .orderBy('seq')
      .execute();
    out.push(...rows.map((r) => ({ id: r.id, type: r.type, object: r.object, objectId: r.object_id, createdAt: r.created_at })));
  }
  return out.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
}

/**
 * Removes, for good, the events naming `ids` and their webhook deliveries with every attempt (an attempt's
 * response excerpt may echo the body), the stored idempotent responses describing them, and their reminder
 * (record or task) and contact-index rows. Deletion order follows the foreign keys.
 */
export async function deleteDerived(db: Executor, organizationId: string, ids: readonly string[]): Promise<void> {
  for (const part of chunks(ids)) {
    const events = db.selectFrom('events').select('id').where('organization_id', '=', organizationId).where('object_id', 'in', part);
    const deliveries = db.selectFrom('webhook_deliveries').select('id').where('event_id', 'in', events);
    await db.deleteFrom('webhook_attempts').where('delivery_id', 'in', deliveries).execute();
    await db.deleteFrom('webhook_deliveries').where('event_id', 'in', events).execute();
    await db.deleteFrom('events').where('organization_id', '=', organizationId).where('object_id', 'in', part).execute();
    await db.deleteFrom('idempotency_keys').where('organization_id', '=', organizationId).where('resource_id', 'in', part).execute();
    await db.deleteFrom('record_reminders').where('organization_id', '=', organizationId).where('record_id', 'in', part).execute();
    await db.deleteFrom('task_reminders').where('organization_id', '=', organizationId).where('task_id', 'in', part).execute();
    await db.deleteFrom('record_contacts').where('organization_id', '=', organizationId).where('record_id', 'in', part).execute();
    await db.deleteFrom('item_values').where('organization_id', '=', organizationId).where('item_id', 'in', part).execute();
  }
}

/** Removes the items themselves (the SQLite name indexes of leads, accounts and deals follow through their triggers). */
export async function deleteHolders(db: Executor, organizationId: string, h: Holders): Promise<void> {
  for (const table of ['leads', 'accounts', 'deals'] as const) {
    for (const part of chunks(h[table])) await db.deleteFrom(table).where('organization_id', '=', organizationId).where('id', 'in', part).execute();
  }
  const records = h.records.map((r) => r.id);
  for (const part of chunks(records)) await db.deleteFrom('records').where('organization_id', '=', organizationId).where('id', 'in', part).execute();
}

/** Stored responses written before migration 0012 (no resource id): the service opens them to find the erased ids. */
export async function unlabelledResponses(db: Executor, organizationId: string): Promise<{ key: string; body: string }[]> {
  const rows = await db
    .selectFrom('idempotency_keys')
    .select(['key', 'response_body'])
    .where('organization_id', '=', organizationId)
    .where('resource_id', 'is', null)
    .where('response_body', 'is not', null)
    .execute();
  return rows.map((r) => ({ key: r.key, body: r.response_body! }));
}

export async function deleteResponses(db: Executor, organizationId: string, keys: readonly string[]): Promise<void> {
  for (const part of chunks(keys)) await db.deleteFrom('idempotency_keys').where('organization_id', '=', organizationId).where('key', 'in', part).execute();
}

export type ErasureRow = Omit<PrivacyErasuresTable, 'seq'>;

export async function insertErasure(db: Executor, row: ErasureRow): Promise<void> {
  await db.insertInto('privacy_erasures').values(row).execute();
}

/** A receipt is written as its erasure completes and never changes: `completed_at` is its creation and its last change. */
const RECEIPT_TIMES = { created: 'completed_at', updated: 'completed_at' };

/** A page of the organization's erasure receipts in creation order, newest first by default (db/list-page.ts). */
export async function listErasures(db: Executor, organizationId: string, request: ListRequest): Promise<ListPage<ErasureRow>> {
  let q = db.selectFrom('privacy_erasures').where('privacy_erasures.organization_id', '=', organizationId);
  for (const c of timeRangeConditions('privacy_erasures', request.range, RECEIPT_TIMES)) q = q.where(c);
  return readColumnPage<ErasureRow>(q, 'privacy_erasures', request, CREATION_ORDER);
}

async function inChunks<T>(ids: readonly string[], read: (part: string[]) => Promise<T[]>): Promise<T[]> {
  const out: T[] = [];
  for (const part of chunks(ids)) out.push(...(await read(part)));
  return out;
}

/* Whole rows with these ids in the organization (export): every column, trashed or not. */
export const leadRows = (db: Executor, organizationId: string, ids: readonly string[]) =>
  inChunks(ids, (part) => db.selectFrom('leads').selectAll().where('organization_id', '=', organizationId).where('id', 'in', part).orderBy('seq').execute());
export const accountRows = (db: Executor, organizationId: string, ids: readonly string[]) =>
  inChunks(ids, (part) => db.selectFrom('accounts').selectAll().where('organization_id', '=', organizationId).where('id', 'in', part).orderBy('seq').execute());
export const dealRows = (db: Executor, organizationId: string, ids: readonly string[]) =>
  inChunks(ids, (part) => db.selectFrom('deals').selectAll().where('organization_id', '=', organizationId).where('id', 'in', part).orderBy('seq').execute());
export const recordRows = async (db: Executor, organizationId: string, ids: readonly string[]): Promise<StoredRecord[]> =>
  (await inChunks(ids, (part) => db.selectFrom('records').selectAll().where('organization_id', '=', organizationId).where('id', 'in', part).orderBy('seq').execute())).map(toStored);
