// The dispatcher's SQL: the fan-out cursor over the outbox, claiming due deliveries under a lease, and
// recording attempts. Dialect differences live here, as small per-dialect branches.

import { sql, type Transaction } from 'kysely';
import type { Dialect } from '../../config.js';
import type { Db, Executor } from '../../db/database.js';
import type { DB, WebhookDeliveriesTable } from '../../db/schema.js';
import type { DeliveryDecision, FanOutEndpoint, FanOutEvent } from './dispatcher.outcome.js';
import type { SealedSecrets } from './webhook-secrets.js';

export interface Cursor {
  seq: number;
  txid: string;
}

/**
 * The fan-out cursor, locked for this transaction. PostgreSQL: SKIP LOCKED, so while one worker fans out
 * the others return null at once instead of queueing. SQLite: the write transaction is already exclusive.
 */
export async function lockCursor(trx: Transaction<DB>, dialect: Dialect): Promise<Cursor | null> {
  const row = await trx
    .selectFrom('webhook_dispatch_state')
    .select(['last_seq', 'last_txid'])
    .where('name', '=', 'fanout')
    .$if(dialect === 'postgres', (q) => q.forUpdate().skipLocked())
    .executeTakeFirst();
  return row ? { seq: Number(row.last_seq), txid: row.last_txid } : null;
}

type EventRow = { seq: number | string; txid: string; id: string; organization_id: string; type: string; payload: string; created_at: string };

/**
 * Events committed after the cursor, in commit-safe order. SQLite commits one writer at a time, so `seq`
 * order is commit order. PostgreSQL draws `seq` before commit, so it reads (txid, seq) order and only events
 * whose transaction is older than every running one: nothing can later commit behind the cursor.
 */
const READ_EVENTS: Record<Dialect, (trx: Transaction<DB>, after: Cursor, limit: number) => Promise<EventRow[]>> = {
  sqlite: (trx, after, limit) =>
    trx
      .selectFrom('events')
      .select(['seq', sql<string>`'0'`.as('txid'), 'id', 'organization_id', 'type', 'payload', 'created_at'])
      .where('seq', '>', after.seq)
      .orderBy('seq')
      .limit(limit)
      .execute(),
  postgres: async (trx, after, limit) =>
    (
      await sql<EventRow>`select seq, txid::text as txid, id, organization_id, type, payload, created_at from events
        where (txid, seq) > (${after.txid}::xid8, ${after.seq}) and txid < pg_snapshot_xmin(pg_current_snapshot())
        order by txid, seq limit ${limit}`.execute(trx)
    ).rows,
};

export async function readEventsAfter(trx: Transaction<DB>, dialect: Dialect, after: Cursor, limit: number): Promise<FanOutEvent[]> {
  const rows = await READ_EVENTS[dialect](trx, after, limit);
  return rows.map((r) => ({ seq: Number(r.seq), txid: r.txid, id: r.id, organizationId: r.organization_id, type: r.type, payload: r.payload, createdAt: r.created_at }));
}

export async function saveCursor(trx: Transaction<DB>, cursor: Cursor, now: string): Promise<void> {
  await trx.updateTable('webhook_dispatch_state').set({ last_seq: cursor.seq, last_txid: cursor.txid, updated_at: now }).where('name', '=', 'fanout').execute();
}

export interface DispatchEndpoint extends FanOutEndpoint, SealedSecrets {
  url: string;
  failingSince: string | null;
}

export async function enabledEndpointsOf(trx: Executor, organizationIds: string[]): Promise<DispatchEndpoint[]> {
  if (organizationIds.length === 0) return [];
  const rows = await trx
    .selectFrom('webhook_endpoints')
    .select(['id', 'organization_id', 'url', 'events', 'failing_since', 'secret_enc', 'previous_secret_enc', 'previous_secret_expires_at', 'created_at'])
    .where('enabled', '=', 1)
    .where('organization_id', 'in', organizationIds)
    .execute();
  return rows.map((r) => ({
    id: r.id,
    organizationId: r.organization_id,
    url: r.url,
    events: JSON.parse(r.events) as string[],
    failingSince: r.failing_since,
    secretEnc: r.secret_enc,
    previousSecretEnc: r.previous_secret_enc,
    previousSecretExpiresAt: r.previous_secret_expires_at,
    createdAt: r.created_at,
  }));
}

export type NewDelivery = Omit<WebhookDeliveriesTable, 'seq'>;

/** Inserts the fan-out's rows; a row whose (endpoint, event) already exists is skipped. Returns the ids inserted. */
export async function insertDeliveries(trx: Executor, rows: NewDelivery[]): Promise<Set<string>> {
  const inserted = new Set<string>();
  for (let i = 0; i < rows.length; i += 200) {
    const result = await trx
      .insertInto('webhook_deliveries')
      .values(rows.slice(i, i + 200))
      .onConflict((oc) => oc.columns(['endpoint_id', 'event_id']).doNothing())
      .returning('id')
      .execute();
    for (const r of result) inserted.add(r.id);
  }
  return inserted;
}

/** Endpoints with deliveries due now (pending, or sending under an expired lease). */
export async function endpointsWithDueDeliveries(db: Executor, now: string, limit: number): Promise<string[]> {
  const rows = await db.selectFrom('webhook_deliveries').select('endpoint_id').distinct().where('due_at', '<=', now).limit(limit).execute();
  return rows.map((r) => r.endpoint_id);
}

export interface Job {
  deliveryId: string;
  endpointId: string;
  eventId: string;
  eventType: string;
  /** Number of this attempt (counted at claim time). */
  attempt: number;
  leaseToken: string;
  leaseUntil: string;
  url: string;
  /** False when the endpoint was disabled after the delivery was queued: it is given up, not sent. */
  enabled: boolean;
  /** The endpoint was in a run of failures when this was claimed: a success must clear the flag. */
  endpointFailing: boolean;
  body: string;
  secrets: SealedSecrets;
}

export interface Lease {
  token: string;
  until: string;
  now: string;
}

/**
 * Takes up to `limit` due deliveries of one endpoint under a lease: the attempt is counted now and the
 * row is due again when the lease ends, so a crashed worker's attempt is retried, and the lease token on
 * the result write keeps a late worker from overwriting a newer attempt. PostgreSQL: SKIP LOCKED, so
 * concurrent workers take disjoint rows.
 */
export async function claimDeliveries(db: Db, dialect: Dialect, endpointId: string, limit: number, lease: Lease): Promise<Job[]> {
  return db.transaction().execute(async (trx) => {
    const claimed = await trx
      .updateTable('webhook_deliveries')
      .set((eb) => ({ status: 'SENDING', attempts: eb('attempts', '+', 1), lease_token: lease.token, due_at: lease.until, updated_at: lease.now }))
      .where('id', 'in', (eb) =>
        eb
          .selectFrom('webhook_deliveries')
          .select('id')
          .where('endpoint_id', '=', endpointId)
          .where('due_at', '<=', lease.now)
          .orderBy('due_at')
          .limit(limit)
          .$if(dialect === 'postgres', (q) => q.forUpdate().skipLocked()),
      )
      .returning('id')
      .execute();
    if (claimed.length === 0) return [];
    const rows = await trx
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
      .innerJoin('events as ev', 'ev.id', 'd.event_id')
      .select([
        'd.id', 'd.endpoint_id', 'd.event_id', 'd.event_type', 'd.attempts', 'e.url', 'e.enabled', 'e.failing_since', 'e.secret_enc',
        'e.previous_secret_enc', 'e.previous_secret_expires_at', 'ev.payload',
      ])
      .where('d.id', 'in', claimed.map((r) => r.id))
      .orderBy('d.due_at')
      .execute();
    return rows.map((r) => ({
      deliveryId: r.id,
      endpointId: r.endpoint_id,
      eventId: r.event_id,
      eventType: r.event_type,
      attempt: Number(r.attempts),
      leaseToken: lease.token,
      leaseUntil: lease.until,
      url: r.url,
      enabled: Number(r.enabled) === 1,
      endpointFailing: r.failing_since !== null,
      body: r.payload,
      secrets: { id: r.endpoint_id, secretEnc: r.secret_enc, previousSecretEnc: r.previous_secret_enc, previousSecretExpiresAt: r.previous_secret_expires_at },
    }));
  });
}

export interface AttemptRecord {
  deliveryId: string;
  leaseToken: string;
  attempt: number;
  startedAt: string;
  durationMs: number;
  responseStatus: number | null;
  responseExcerpt: string | null;
  error: string | null;
  succeeded: boolean;
  decision: DeliveryDecision;
  now: string;
}

/**
 * Applies attempt results whose lease is still held (a result for a row another worker has since taken is
 * dropped) and logs each applied attempt. Returns the applied records.
 */
export async function saveAttempts(trx: Transaction<DB>, records: AttemptRecord[]): Promise<AttemptRecord[]> {
  const applied: AttemptRecord[] = [];
  for (const r of records) {
    const result = await trx
      .updateTable('webhook_deliveries')
      .set({ status: r.decision.status, due_at: r.decision.dueAt, error: r.decision.error, lease_token: null, updated_at: r.now })
      .where('id', '=', r.deliveryId)
      .where('lease_token', '=', r.leaseToken)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) > 0) applied.push(r);
  }
  for (let i = 0; i < applied.length; i += 200) {
    await trx
      .insertInto('webhook_attempts')
      .values(
        applied.slice(i, i + 200).map((r) => ({
          delivery_id: r.deliveryId,
          attempt: r.attempt,
          started_at: r.startedAt,
          duration_ms: r.durationMs,
          response_status: r.responseStatus,
          response_excerpt: r.responseExcerpt,
          error: r.error,
          succeeded: r.succeeded ? 1 : 0,
        })),
      )
      .execute();
  }
  return applied;
}

/**
 * Hands a claimed delivery back without an attempt: given up (`failed`, its endpoint was disabled) or
 * returned to the queue (its lease ran short before sending). The claim's attempt count is undone.
 */
export async function releaseClaim(trx: Executor, deliveryId: string, leaseToken: string, outcome: { failed: string } | { dueAt: string }, now: string): Promise<void> {
  await trx
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      status: 'failed' in outcome ? 'FAILED' : 'PENDING',
      due_at: 'failed' in outcome ? null : outcome.dueAt,
      error: 'failed' in outcome ? outcome.failed : null,
      attempts: eb('attempts', '-', 1),
      lease_token: null,
      updated_at: now,
    }))
    .where('id', '=', deliveryId)
    .where('lease_token', '=', leaseToken)
    .execute();
}

/** A success ends an endpoint's run of failures. */
export async function clearFailing(trx: Executor, endpointIds: string[]): Promise<void> {
  if (endpointIds.length === 0) return;
  await trx.updateTable('webhook_endpoints').set({ failing_since: null }).where('id', 'in', endpointIds).where('failing_since', 'is not', null).execute();
}

/** Starts a run of failures where none is running; returns when each (still enabled) endpoint's run began. */
export async function markFailing(trx: Executor, firstFailure: Map<string, string>): Promise<Map<string, string>> {
  if (firstFailure.size === 0) return new Map();
  for (const [id, at] of firstFailure) {
    await trx.updateTable('webhook_endpoints').set({ failing_since: at }).where('id', '=', id).where('failing_since', 'is', null).execute();
  }
  const rows = await trx
    .selectFrom('webhook_endpoints')
    .select(['id', 'failing_since'])
    .where('id', 'in', [...firstFailure.keys()])
    .where('enabled', '=', 1)
    .execute();
  return new Map(rows.flatMap((r) => (r.failing_since ? [[r.id, r.failing_since] as const] : [])));
}

/** Disables an enabled endpoint; false when it was already disabled (or deleted). */
export async function disableEndpoint(trx: Executor, id: string, reason: string, now: string): Promise<boolean> {
  const result = await trx
    .updateTable('webhook_endpoints')
    .set({ enabled: 0, disabled_reason: reason, updated_at: now })
    .where('id', '=', id)
    .where('enabled', '=', 1)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
