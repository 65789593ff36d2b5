// The dispatcher's database steps, each one short transaction with no network I/O inside: fan-out (outbox →
// delivery rows), claiming due rows, and recording attempt results (with their effect on endpoint health).
// They go through database.transaction(): on SQLite, steps started together (and API writes of the same
// moment) share one COMMIT, which costs far more than their statements.

import type { Database } from '../../db/database.js';
import { newId } from '../../lib/ids.js';
import { cancelPendingDeliveries } from './deliveries.store.js';
import { failingTooLong, planFanOut, summarizeSignals, type EndpointSignal } from './dispatcher.outcome.js';
import { clearFailing, disableEndpoint, markFailing, releaseClaim, saveAttempts, type AttemptRecord } from './dispatcher-results.store.js';
import {
  claimDeliveries,
  enabledEndpointsOf,
  insertDeliveries,
  lockCursor,
  readEventsAfter,
  saveCursor,
  type Job,
  type Lease,
  type NewDelivery,
} from './dispatcher.store.js';
import type { DisabledReason } from './webhooks.schemas.js';

/** What the steps need of the database: its transactions (group-committed on SQLite) and its dialect. */
export type Transactions = Pick<Database, 'transaction' | 'dialect'>;

export interface FanOutResult {
  events: number;
  /** Deliveries leased to this process at insert, to send now. */
  jobs: Job[];
}

/**
 * Reads the next events after the cursor and inserts one delivery per subscribed endpoint, moving the
 * cursor in the same transaction: a crash leaves both untouched, and the unique (endpoint, event) key makes
 * a repeated fan-out harmless. Deliveries whose endpoint has a free slot here (`reserve`) are leased to this
 * process at once, saving a claim round trip; the others wait as PENDING for any worker.
 * Returns 'busy' when another worker holds the cursor (PostgreSQL).
 */
export async function fanOutBatch(database: Transactions, limit: number, lease: Lease, reserve: (endpointId: string) => boolean): Promise<FanOutResult | 'busy'> {
  return database.transaction(async (trx) => {
    const cursor = await lockCursor(trx, database.dialect);
    if (cursor === null) return 'busy';
    const events = await readEventsAfter(trx, database.dialect, cursor, limit);
    const last = events.at(-1);
    if (last === undefined) return { events: 0, jobs: [] };
    const endpoints = await enabledEndpointsOf(trx, database.dialect, [...new Set(events.map((e) => e.organizationId))]);
    const now = new Date(lease.now);
    const planned = planFanOut(events, endpoints).map(({ event, endpoint }) => {
      const leased = reserve(endpoint.id);
      const row: NewDelivery = {
        id: newId(now),
        organization_id: event.organizationId,
        endpoint_id: endpoint.id,
        event_id: event.id,
        event_type: event.type,
        status: leased ? 'SENDING' : 'PENDING',
        attempts: leased ? 1 : 0,
        due_at: leased ? lease.until : lease.now,
        lease_token: leased ? lease.token : null,
        error: null,
        created_at: lease.now,
        updated_at: lease.now,
      };
      const job: Job | null = leased
        ? { deliveryId: row.id, endpointId: endpoint.id, eventId: event.id, eventType: event.type, attempt: 1, leaseToken: lease.token, leaseUntil: lease.until, url: endpoint.url, enabled: true, endpointFailing: endpoint.failingSince !== null, body: event.payload, secrets: endpoint }
        : null;
      return { row, job };
    });
    const inserted = await insertDeliveries(trx, planned.map((p) => p.row));
    await saveCursor(trx, { seq: last.seq, txid: last.txid }, lease.now);
    // A leased row that already existed is not ours to send; its reservation is returned by the caller.
    return { events: events.length, jobs: planned.flatMap((p) => (p.job && inserted.has(p.row.id) ? [p.job] : [])) };
  });
}

/** Due deliveries of several endpoints (up to `limit` each) under one lease, in one transaction. */
export async function claimDue(database: Transactions, wants: { endpointId: string; limit: number }[], lease: Lease): Promise<Job[]> {
  return database.transaction((trx) => claimDeliveries(trx, database.dialect, wants, lease));
}

export type Outcome =
  | { kind: 'attempt'; endpointId: string; endpointFailing: boolean; signal: EndpointSignal; record: AttemptRecord }
  | { kind: 'release'; deliveryId: string; leaseToken: string; outcome: { failed: string } | { dueAt: string }; now: string };

const DISABLED_MESSAGES: Record<Exclude<DisabledReason, 'DISABLED_BY_USER'>, string> = {
  ENDPOINT_GONE: 'Endpoint disabled: it answered 410 Gone',
  FAILING_FOR_3_DAYS: 'Endpoint disabled: every attempt failed for 3 days',
};

/**
 * Records a batch of results in one transaction: delivery states and the attempt log, then endpoint health
 * (a success clears the failure flag; a 410, or failures for 3 days, disables the endpoint and cancels its
 * queue). Returns the endpoints disabled by this batch.
 */
export async function recordOutcomes(database: Transactions, outcomes: Outcome[], now: Date): Promise<{ id: string; reason: DisabledReason }[]> {
  return database.transaction(async (trx) => {
    for (const o of outcomes) if (o.kind === 'release') await releaseClaim(trx, o.deliveryId, o.leaseToken, o.outcome, o.now);
    const attempts = outcomes.flatMap((o) => (o.kind === 'attempt' ? [o] : []));
    const applied = new Set((await saveAttempts(trx, attempts.map((a) => a.record))).map((r) => r.deliveryId));
    const signals = summarizeSignals(
      attempts.filter((a) => applied.has(a.record.deliveryId)).map((a) => ({ endpointId: a.endpointId, signal: a.signal, at: a.record.now })),
    );
    // Only endpoints that were (or just became) failing need the flag cleared: one statement saved per batch.
    const flagged = new Set(attempts.filter((a) => a.endpointFailing || a.signal !== 'healthy').map((a) => a.endpointId));
    await clearFailing(trx, signals.recovered.filter((id) => flagged.has(id)));
    const since = await markFailing(trx, new Map([...signals.failing].map(([id, run]) => [id, run.first])));
    const toDisable: { id: string; reason: Exclude<DisabledReason, 'DISABLED_BY_USER'> }[] = signals.gone.map((id) => ({ id, reason: 'ENDPOINT_GONE' }));
    for (const [id, failingSince] of since) {
      const last = signals.failing.get(id)!.last;
      if (!signals.gone.includes(id) && failingTooLong(failingSince, new Date(last))) toDisable.push({ id, reason: 'FAILING_FOR_3_DAYS' });
    }
    const disabled: { id: string; reason: DisabledReason }[] = [];
    for (const { id, reason } of toDisable) {
      if (!(await disableEndpoint(trx, id, reason, now.toISOString()))) continue;
      await cancelPendingDeliveries(trx, id, DISABLED_MESSAGES[reason], now.toISOString());
      disabled.push({ id, reason });
    }
    return disabled;
  });
}
