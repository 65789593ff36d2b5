// The dispatcher's database steps, each one short transaction with no network I/O inside: fan-out (outbox →
// delivery rows), claiming due rows, and recording attempt results (with their effect on endpoint health).
// They go through database.transaction(): on SQLite, steps started together (and API writes of the same
// moment) share one COMMIT, which costs far more than their statements.

import type { Transaction } from 'kysely';
import type { Database } from '../../db/database.js';
import type { DB } from '../../db/schema.js';
import { newId } from '../../lib/ids.js';
import { cancelPendingDeliveries } from './deliveries.store.js';
import { failingTooLong, planFanOut, summarizeSignals, type EndpointSignal, type FanOutEvent } from './dispatcher.outcome.js';
import { clearFailing, disableEndpoint, markFailing, releaseClaim, saveAttempts, type AttemptRecord } from './dispatcher-results.store.js';
import {
  claimDeliveries,
  deferringEndpoints,
  enabledEndpointsOf,
  insertDeliveries,
  liveDeliveries,
  lockCursor,
  moveBacklog,
  readEventsAfter,
  saveCursor,
  setBacklog,
  type Cursor,
  type DispatchEndpoint,
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

/** When an endpoint's queue is this long and it isn't being delivered to, its new events wait in the outbox. */
export interface BacklogLimits {
  /** Deliveries still to send at which an endpoint's new events start to be deferred. */
  deferAt: number;
  /** Deferred events are queued again once its queue is down to this, or it is answering again. */
  resumeAt: number;
  /** Outbox events read per catch-up transaction. */
  catchUpBatch: number;
}

export const DEFAULT_BACKLOG: BacklogLimits = { deferAt: 1_000, resumeAt: 500, catchUpBatch: 500 };

/** Whether event position `a` comes after `b` in the outbox's commit order ((txid, seq); txid is '0' on SQLite). */
function after(a: Cursor, b: Cursor): boolean {
  const ta = BigInt(a.txid);
  const tb = BigInt(b.txid);
  return ta !== tb ? ta > tb : a.seq > b.seq;
}

/**
 * The delivery rows of (event, endpoint) pairs: leased to this process at once where the endpoint has a free
 * slot here (`reserve`), saving a claim round trip; the others PENDING, due now, for any worker.
 */
function deliveryRows(pairs: { event: FanOutEvent; endpoint: DispatchEndpoint }[], lease: Lease, reserve: (endpointId: string) => boolean) {
  const now = new Date(lease.now);
  return pairs.map(({ event, endpoint }) => {
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
}

/** Inserts the rows; the jobs of the leased rows actually inserted (an existing row is not ours to send). */
async function insertPlanned(trx: Transaction<DB>, planned: ReturnType<typeof deliveryRows>): Promise<Job[]> {
  const inserted = await insertDeliveries(trx, planned.map((p) => p.row));
  return planned.flatMap((p) => (p.job && inserted.has(p.row.id) ? [p.job] : []));
}

/** What the steps that insert delivery rows learn from the dispatcher about each endpoint. */
export interface Sending {
  /** Takes a slot of this process for the endpoint (its row is then leased at insert), false without room. */
  reserve(endpointId: string): boolean;
  /** This process is delivering to the endpoint successfully right now. */
  deliveringTo(endpointId: string): boolean;
}

/**
 * Reads the next events after the cursor and inserts one delivery per subscribed endpoint, moving the
 * cursor in the same transaction: a crash leaves both untouched, and the unique (endpoint, event) key makes
 * a repeated fan-out harmless. Returns 'busy' when another worker holds the cursor (PostgreSQL).
 *
 * An endpoint with `deferAt` deliveries already waiting that isn't being delivered to (dead, failing, too
 * slow) gets no more rows: its later events stay in the outbox, from the position recorded on the endpoint
 * (its backlog), and catchUpBatch() queues them once it answers again or its queue shortens. A dead endpoint
 * thus costs nothing per event, where it cost a row and six index entries per event for days, and its
 * commits' extra pages slowed every healthy endpoint's deliveries (by 14 % in bench/webhooks.ts).
 */
export async function fanOutBatch(
  database: Transactions,
  limit: number,
  lease: Lease,
  sending: Sending,
  backlog: BacklogLimits = DEFAULT_BACKLOG,
): Promise<FanOutResult | 'busy'> {
  return database.transaction(async (trx) => {
    const cursor = await lockCursor(trx, database.dialect);
    if (cursor === null) return 'busy';
    const events = await readEventsAfter(trx, database.dialect, cursor, limit);
    const last = events.at(-1);
    if (last === undefined) return { events: 0, jobs: [] };
    const endpoints = await enabledEndpointsOf(trx, database.dialect, [...new Set(events.map((e) => e.organizationId))]);
    const pairs = planFanOut(events, endpoints.filter((e) => e.backlog === null));
    // The queue of an endpoint not being delivered to is measured once per batch, at its first event here.
    const deferred = new Set<string>();
    const measured = new Set<string>();
    const kept: typeof pairs = [];
    for (const pair of pairs) {
      const { event, endpoint } = pair;
      if (deferred.has(endpoint.id)) continue;
      if (!measured.has(endpoint.id) && !sending.deliveringTo(endpoint.id)) {
        measured.add(endpoint.id);
        if ((await liveDeliveries(trx, endpoint.id, backlog.deferAt)) >= backlog.deferAt) {
          // Deferred from this event on: the backlog starts right before it.
          const index = events.indexOf(event);
          await setBacklog(trx, endpoint.id, index === 0 ? cursor : events[index - 1]!);
          deferred.add(endpoint.id);
          continue;
        }
      }
      kept.push(pair);
    }
    const jobs = await insertPlanned(trx, deliveryRows(kept, lease, sending.reserve));
    await saveCursor(trx, { seq: last.seq, txid: last.txid }, lease.now);
    return { events: events.length, jobs };
  });
}

export interface CatchUpResult {
  /** Deferred events read (0: nothing deferred was ready to be queued). */
  events: number;
  jobs: Job[];
}

/**
 * Queues deferred events of endpoints that can take them again (answering this process again, or their
 * queue down to `resumeAt`): up to `catchUpBatch` outbox events after each one's backlog position, never
 * past the fan-out cursor (held for the transaction, so the two never interleave). An endpoint that reaches
 * the cursor stops deferring. Returns 'busy' when another worker holds the cursor.
 */
export async function catchUpBatch(
  database: Transactions,
  lease: Lease,
  sending: Sending,
  backlog: BacklogLimits = DEFAULT_BACKLOG,
): Promise<CatchUpResult | 'busy'> {
  return database.transaction(async (trx) => {
    const cursor = await lockCursor(trx, database.dialect);
    if (cursor === null) return 'busy';
    let read = 0;
    const jobs: Job[] = [];
    for (const endpoint of await deferringEndpoints(trx)) {
      if (!sending.deliveringTo(endpoint.id) && (await liveDeliveries(trx, endpoint.id, backlog.resumeAt)) >= backlog.resumeAt) continue;
      const from = endpoint.backlog!;
      const batch = await readEventsAfter(trx, database.dialect, from, backlog.catchUpBatch);
      const events = batch.filter((e) => !after(e, cursor));
      const reachedCursor = events.length < batch.length || batch.length < backlog.catchUpBatch;
      // Disabled (its backlog dropped) since it was read: nothing to queue.
      if (!(await moveBacklog(trx, endpoint.id, from, reachedCursor ? null : events.at(-1)!))) continue;
      read += events.length;
      jobs.push(...(await insertPlanned(trx, deliveryRows(planFanOut(events, [endpoint]), lease, sending.reserve))));
    }
    return { events: read, jobs };
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
