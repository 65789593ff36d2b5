// The dispatcher's SQL for recording what happened: attempt results (under the lease they were sent with), the
// attempt log, claims handed back unsent, and endpoint health (failing since, disabled). Results arrive in
// batches, so the per-row statements are compiled once per chunk size (db/compiled-rows.ts).

import { sql, type Transaction } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { DB, WebhookAttemptsTable } from '../../db/schema.js';
import { compiledForRows } from '../../db/compiled-rows.js';
import type { StoredAttempt } from './deliveries.store.js';
import type { DeliveryDecision } from './dispatcher.outcome.js';

/** An attempt as logged, with what the result write needs: the lease it was sent under and the decision. */
export interface AttemptRecord extends StoredAttempt {
  leaseToken: string;
  decision: DeliveryDecision;
  now: string;
}

type ResultRow = { id: string; lease_token: string; status: string; due_at: string | null; error: string | null; updated_at: string };

/** One UPDATE … FROM (VALUES …) for many results; both databases name the VALUES columns column1, column2, … */
const applyResults = compiledForRows(['id', 'lease_token', 'status', 'due_at', 'error', 'updated_at'] as const, (db, rows: ResultRow[]) => {
  const values = sql.join(rows.map((r) => sql`(${r.id}, ${r.lease_token}, ${r.status}, ${r.due_at}, ${r.error}, ${r.updated_at})`));
  const query = sql<{ id: string }>`update webhook_deliveries as d
    set status = v.column3, due_at = v.column4, error = v.column5, lease_token = null, updated_at = v.column6
    from (values ${values}) as v
    where d.id = v.column1 and d.lease_token = v.column2
    returning id`;
  return { compile: () => query.compile(db) };
});

type AttemptRow = Omit<WebhookAttemptsTable, 'seq'>;

const insertAttempts = compiledForRows(
  ['delivery_id', 'attempt', 'started_at', 'duration_ms', 'response_status', 'response_excerpt', 'error', 'succeeded'] as const,
  (db, rows: AttemptRow[]) => db.insertInto('webhook_attempts').values(rows),
);

/**
 * Applies attempt results whose lease is still held (a result for a row another worker has since taken is
 * dropped) and logs each applied attempt. Returns the applied records.
 */
export async function saveAttempts(trx: Transaction<DB>, records: AttemptRecord[]): Promise<AttemptRecord[]> {
  const results = records.map((r) => ({ id: r.deliveryId, lease_token: r.leaseToken, status: r.decision.status, due_at: r.decision.dueAt, error: r.decision.error, updated_at: r.now }));
  const applied = new Set((await applyResults(trx, results)).map((r) => r.id));
  const saved = records.filter((r) => applied.has(r.deliveryId));
  await insertAttempts(
    trx,
    saved.map((r) => ({
      delivery_id: r.deliveryId,
      attempt: r.attempt,
      started_at: r.startedAt,
      duration_ms: r.durationMs,
      response_status: r.responseStatus,
      response_excerpt: r.responseExcerpt,
      error: r.error,
      succeeded: r.succeeded ? 1 : 0,
    })),
  );
  return saved;
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
