import type { SelectQueryBuilder } from 'kysely';
import type { Executor } from '../../db/database.js';
import { columnSort, CREATION_ORDER, equalityConditions, readPage, timeRangeConditions, type ListPage } from '../../db/list-page.js';
import type { DB, WebhookAttemptsTable, WebhookDeliveriesTable } from '../../db/schema.js';
import type { ListRequest } from '../../lib/list-request.js';
import type { DeliveryStatus } from './webhooks.schemas.js';

export interface StoredDelivery {
  id: string;
  organizationId: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  status: DeliveryStatus;
  attempts: number;
  dueAt: string | null;
  error: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface StoredAttempt {
  deliveryId: string;
  attempt: number;
  startedAt: string;
  durationMs: number;
  responseStatus: number | null;
  responseExcerpt: string | null;
  error: string | null;
  succeeded: boolean;
}

const COLUMNS = ['id', 'organization_id', 'endpoint_id', 'event_id', 'event_type', 'status', 'attempts', 'due_at', 'error', 'created_at', 'updated_at'] as const;
type Row = Pick<WebhookDeliveriesTable, (typeof COLUMNS)[number]>;

const toStored = (r: Row): StoredDelivery => ({
  id: r.id,
  organizationId: r.organization_id,
  endpointId: r.endpoint_id,
  eventId: r.event_id,
  eventType: r.event_type,
  status: r.status as DeliveryStatus,
  attempts: Number(r.attempts),
  dueAt: r.due_at,
  error: r.error,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

const toStoredAttempt = (r: Omit<WebhookAttemptsTable, 'seq'>): StoredAttempt => ({
  deliveryId: r.delivery_id,
  attempt: Number(r.attempt),
  startedAt: r.started_at,
  durationMs: Number(r.duration_ms),
  responseStatus: r.response_status === null ? null : Number(r.response_status),
  responseExcerpt: r.response_excerpt,
  error: r.error,
  succeeded: Number(r.succeeded) === 1,
});

/** A new delivery series, due at once (used for test events; the dispatcher's fan-out inserts in bulk). */
export async function insertDelivery(db: Executor, d: Omit<StoredDelivery, 'attempts' | 'error' | 'status'>): Promise<void> {
  await db
    .insertInto('webhook_deliveries')
    .values({
      id: d.id,
      organization_id: d.organizationId,
      endpoint_id: d.endpointId,
      event_id: d.eventId,
      event_type: d.eventType,
      status: 'PENDING',
      attempts: 0,
      due_at: d.dueAt,
      lease_token: null,
      error: null,
      created_at: d.createdAt,
      updated_at: d.updatedAt,
    })
    .execute();
}

export async function findDelivery(db: Executor, endpointId: string, id: string): Promise<StoredDelivery | undefined> {
  const row = await db.selectFrom('webhook_deliveries').select(COLUMNS).where('endpoint_id', '=', endpointId).where('id', '=', id).executeTakeFirst();
  return row && toStored(row);
}

type AttemptRow = Omit<WebhookAttemptsTable, 'seq'>;

export interface DeliveryWithAttempts {
  delivery: StoredDelivery;
  attempts: StoredAttempt[];
  seq: number;
}

/**
 * The deliveries `page` selects (one endpoint's, filtered, ordered and limited) with every attempt, oldest first,
 * read in ONE statement: a delivery and its attempts always come from the same snapshot, even while the
 * dispatcher writes. `descending` is the page's order by `seq`.
 */
async function withAttempts(db: Executor, page: SelectQueryBuilder<DB, 'webhook_deliveries', Row & { seq: number }>, descending: boolean): Promise<DeliveryWithAttempts[]> {
  const rows = await db
    .selectFrom(page.as('d'))
    .leftJoin('webhook_attempts as a', 'a.delivery_id', 'd.id')
    .select(COLUMNS.map((c) => `d.${c}` as const))
    .select('d.seq')
    .select(['a.attempt', 'a.started_at', 'a.duration_ms', 'a.response_status', 'a.response_excerpt', 'a.error as attempt_error', 'a.succeeded'])
    .orderBy('d.seq', descending ? 'desc' : 'asc')
    .orderBy('a.seq', 'asc')
    .execute();
  const out = new Map<string, DeliveryWithAttempts>();
  for (const r of rows) {
    let entry = out.get(r.id);
    if (!entry) out.set(r.id, (entry = { delivery: toStored(r), attempts: [], seq: Number(r.seq) }));
    if (r.attempt !== null) {
      const attempt: AttemptRow = {
        delivery_id: r.id,
        attempt: r.attempt,
        started_at: r.started_at!,
        duration_ms: r.duration_ms!,
        response_status: r.response_status,
        response_excerpt: r.response_excerpt,
        error: r.attempt_error,
        succeeded: r.succeeded!,
      };
      entry.attempts.push(toStoredAttempt(attempt));
    }
  }
  return [...out.values()];
}

/** The equality filters of GET /webhooks/{id}/deliveries and their columns. */
const DELIVERY_FILTERS: Record<string, string> = { status: 'status', eventId: 'event_id' };

/**
 * A page of one endpoint's deliveries with their attempts, in creation order (`seq`, newest first by default)
 * through the shared list reader (db/list-page.ts): a cursor page is one range of the (endpoint, seq) index.
 * The filters and time ranges are checked on the rows that range reads.
 */
export async function listDeliveries(db: Executor, endpointId: string, filter: { status?: DeliveryStatus | undefined; eventId?: string | undefined }, request: ListRequest): Promise<ListPage<DeliveryWithAttempts>> {
  let q = db.selectFrom('webhook_deliveries').where('webhook_deliveries.endpoint_id', '=', endpointId);
  for (const c of [...equalityConditions('webhook_deliveries', DELIVERY_FILTERS, filter), ...timeRangeConditions('webhook_deliveries', request.range)]) q = q.where(c);
  const key = columnSort('webhook_deliveries', request.sort, CREATION_ORDER);
  return readPage<DeliveryWithAttempts>(q, key, request, (d) => ({ value: d.seq, seq: d.seq }), (page) => withAttempts(db, page.select([...COLUMNS, 'seq']), key.descending));
}

/** One delivery of an endpoint with its attempts. */
export async function findDeliveryWithAttempts(db: Executor, endpointId: string, id: string): Promise<DeliveryWithAttempts | undefined> {
  const one = db.selectFrom('webhook_deliveries').select([...COLUMNS, 'seq']).where('endpoint_id', '=', endpointId).where('id', '=', id);
  return (await withAttempts(db, one, true))[0];
}

/**
 * Puts a finished (or waiting) delivery back in the queue, due now, keeping its id and event: a manual
 * re-send. Refused (false) while an attempt is in flight, so one attempt is never sent twice.
 */
export async function requeueDelivery(db: Executor, id: string, now: string): Promise<boolean> {
  const result = await db
    .updateTable('webhook_deliveries')
    .set({ status: 'PENDING', due_at: now, error: null, updated_at: now })
    .where('id', '=', id)
    .where('status', '!=', 'SENDING')
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Gives up the queued deliveries and deferred events of an endpoint that was just disabled (in-flight attempts finish). */
export async function cancelPendingDeliveries(db: Executor, endpointId: string, reason: string, now: string): Promise<void> {
  await db
    .updateTable('webhook_deliveries')
    .set({ status: 'FAILED', due_at: null, error: reason, updated_at: now })
    .where('endpoint_id', '=', endpointId)
    .where('status', '=', 'PENDING')
    .execute();
  // Events deferred for it (dispatcher.work.ts) are dropped like its queued deliveries.
  await db.updateTable('webhook_endpoints').set({ backlog_seq: null, backlog_txid: null }).where('id', '=', endpointId).execute();
}

/**
 * Deletes up to `batch` finished deliveries created before `before` (their attempts cascade). Returns how
 * many went, so the caller can loop in small transactions instead of one long lock.
 */
export async function pruneDeliveries(db: Executor, before: string, batch: number): Promise<number> {
  const ids = await db
    .selectFrom('webhook_deliveries')
    .select('id')
    .where('created_at', '<', before)
    .where('due_at', 'is', null)
    .limit(batch)
    .execute();
  if (ids.length === 0) return 0;
  // Re-checked: a manual re-send between the two statements makes the row live again.
  await db.deleteFrom('webhook_deliveries').where('id', 'in', ids.map((r) => r.id)).where('due_at', 'is', null).execute();
  return ids.length;
}
