// The dispatcher's SQL for taking work: the fan-out cursor over the outbox, the delivery rows it inserts, and
// claiming due deliveries under a lease (results: dispatcher-results.store.ts). Dialect differences live here,
// as small per-dialect tables. The statements run for every few events, so the fixed ones are compiled once
// (db/precompiled.ts) and the multi-row ones once per chunk size (db/compiled-rows.ts).

import { sql, type Kysely, type Transaction } from 'kysely';
import type { Dialect } from '../../config.js';
import type { Executor } from '../../db/database.js';
import { precompile } from '../../db/precompiled.js';
import type { DB, WebhookDeliveriesTable } from '../../db/schema.js';
import { compiledForRows } from '../../db/compiled-rows.js';
import type { FanOutEndpoint, FanOutEvent } from './dispatcher.outcome.js';
import type { SealedSecrets } from './webhook-secrets.js';
import { AFTER_POSITION, VISIBLE_HORIZON, type OutboxPosition } from '../events/outbox-order.js';

/** The fan-out cursor: an outbox position (events/outbox-order.ts). */
export type Cursor = OutboxPosition;

const selectCursor = (db: Kysely<DB>) =>
  db.selectFrom('webhook_dispatch_state').select(['last_seq', 'last_txid']).where('name', '=', 'fanout');

/**
 * The fan-out cursor, locked for this transaction. PostgreSQL: SKIP LOCKED, so while one worker fans out
 * the others return null at once instead of queueing. SQLite: the write transaction is already exclusive.
 */
const LOCK_CURSOR: Record<Dialect, (trx: Transaction<DB>) => Promise<{ last_seq: number; last_txid: string }[]>> = {
  sqlite: precompile((db) => selectCursor(db)),
  postgres: precompile((db) => selectCursor(db).forUpdate().skipLocked()),
};

export async function lockCursor(trx: Transaction<DB>, dialect: Dialect): Promise<Cursor | null> {
  const [row] = await LOCK_CURSOR[dialect](trx);
  return row ? { seq: Number(row.last_seq), txid: row.last_txid } : null;
}

type EventRow = { seq: number | string; txid: string; id: string; organization_id: string; type: string; payload: string; created_at: string };

/** Events committed after the cursor, in commit-safe order (events/outbox-order.ts explains it). */
const readEventsSqlite = precompile((db, afterSeq: number, limit: number) =>
  db
    .selectFrom('events')
    .select(['seq', sql<string>`'0'`.as('txid'), 'id', 'organization_id', 'type', 'payload', 'created_at'])
    .where('seq', '>', afterSeq)
    .orderBy('seq')
    .limit(limit),
);

const READ_EVENTS: Record<Dialect, (trx: Transaction<DB>, after: Cursor, limit: number) => Promise<EventRow[]>> = {
  sqlite: (trx, after, limit) => readEventsSqlite(trx, after.seq, limit),
  postgres: async (trx, after, limit) =>
    (
      await sql<EventRow>`select seq, txid::text as txid, id, organization_id, type, payload, created_at from events
        where ${AFTER_POSITION.postgres('events', after)} and ${VISIBLE_HORIZON.postgres('events')}
        order by txid, seq limit ${limit}`.execute(trx)
    ).rows,
};

export async function readEventsAfter(trx: Transaction<DB>, dialect: Dialect, after: Cursor, limit: number): Promise<FanOutEvent[]> {
  const rows = await READ_EVENTS[dialect](trx, after, limit);
  return rows.map((r) => ({ seq: Number(r.seq), txid: r.txid, id: r.id, organizationId: r.organization_id, type: r.type, payload: r.payload, createdAt: r.created_at }));
}

const updateCursor = precompile((db, seq: number, txid: string, now: string) =>
  db.updateTable('webhook_dispatch_state').set({ last_seq: seq, last_txid: txid, updated_at: now }).where('name', '=', 'fanout'),
);

export async function saveCursor(trx: Transaction<DB>, cursor: Cursor, now: string): Promise<void> {
  await updateCursor(trx, cursor.seq, cursor.txid, now);
}

export interface DispatchEndpoint extends FanOutEndpoint, SealedSecrets {
  url: string;
  failingSince: string | null;
  /** Set while the endpoint's events after this outbox position are deferred (no delivery rows yet). */
  backlog: Cursor | null;
}

const selectEndpoints = (db: Kysely<DB>) =>
  db
    .selectFrom('webhook_endpoints')
    .select([
      'id', 'organization_id', 'url', 'events', 'failing_since', 'secret_enc', 'previous_secret_enc', 'previous_secret_expires_at', 'created_at',
      'backlog_seq', 'backlog_txid',
    ])
    .where('enabled', '=', 1);

type EndpointRow = Awaited<ReturnType<ReturnType<typeof selectEndpoints>['execute']>>[number];

const endpointsOfSqlite = precompile((db, ids: string) => selectEndpoints(db).where('organization_id', 'in', sql<string>`(select value from json_each(${ids}))`));

/** The organizations' ids travel as ONE parameter (a JSON array on SQLite, an array on PostgreSQL): a fixed statement. */
const ENABLED_ENDPOINTS_OF: Record<Dialect, (trx: Executor, organizationIds: string[]) => Promise<EndpointRow[]>> = {
  sqlite: (trx, ids) => endpointsOfSqlite(trx, JSON.stringify(ids)),
  postgres: precompile((db, ids: string[]) => selectEndpoints(db).where(sql<boolean>`organization_id = any(${ids})`)),
};

const toDispatchEndpoint = (r: EndpointRow): DispatchEndpoint => ({
  id: r.id,
  organizationId: r.organization_id,
  url: r.url,
  events: JSON.parse(r.events) as string[],
  failingSince: r.failing_since,
  secretEnc: r.secret_enc,
  previousSecretEnc: r.previous_secret_enc,
  previousSecretExpiresAt: r.previous_secret_expires_at,
  createdAt: r.created_at,
  backlog: r.backlog_seq === null ? null : { seq: Number(r.backlog_seq), txid: r.backlog_txid ?? '0' },
});

export async function enabledEndpointsOf(trx: Executor, dialect: Dialect, organizationIds: string[]): Promise<DispatchEndpoint[]> {
  if (organizationIds.length === 0) return [];
  return (await ENABLED_ENDPOINTS_OF[dialect](trx, organizationIds)).map(toDispatchEndpoint);
}

const selectDeferring = precompile((db) => selectEndpoints(db).where('backlog_seq', 'is not', null).orderBy('seq').limit(100));

/** Enabled endpoints with deferred events (at most 100 per call). */
export async function deferringEndpoints(trx: Executor): Promise<DispatchEndpoint[]> {
  return (await selectDeferring(trx)).map(toDispatchEndpoint);
}

const setBacklogPosition = precompile((db, id: string, seq: number | null, txid: string | null) =>
  db.updateTable('webhook_endpoints').set({ backlog_seq: seq, backlog_txid: txid }).where('id', '=', id),
);

/** Defers the endpoint's events after `after` (null: none deferred any more). */
export async function setBacklog(trx: Executor, endpointId: string, after: Cursor | null): Promise<void> {
  await setBacklogPosition(trx, endpointId, after?.seq ?? null, after?.txid ?? null);
}

const moveBacklogPosition = precompile((db, id: string, fromSeq: number, seq: number | null, txid: string | null) =>
  db
    .updateTable('webhook_endpoints')
    .set({ backlog_seq: seq, backlog_txid: txid })
    .where('id', '=', id)
    .where('enabled', '=', 1)
    .where('backlog_seq', '=', fromSeq)
    .returning('id'),
);

/**
 * Moves an endpoint's backlog on from `from` to `to` (null: caught up) if it is still at `from` and the endpoint
 * still enabled; false when a concurrent change got there first (disabling drops the backlog). The UPDATE takes
 * the row's lock, so on PostgreSQL it waits for such a change to commit and then sees it: deferred events read
 * before the endpoint was disabled are not queued after it.
 */
export async function moveBacklog(trx: Executor, endpointId: string, from: Cursor, to: Cursor | null): Promise<boolean> {
  return (await moveBacklogPosition(trx, endpointId, from.seq, to?.seq ?? null, to?.txid ?? null)).length > 0;
}

const countLiveRows = precompile((db, endpointId: string, upTo: number) =>
  db
    .selectFrom((eb) =>
      eb.selectFrom('webhook_deliveries').select(sql<number>`1`.as('one')).where('endpoint_id', '=', endpointId).where('due_at', 'is not', null).limit(upTo).as('live'),
    )
    .select((eb) => eb.fn.countAll<number>().as('n')),
);

/** The endpoint's deliveries still to send (pending or in flight), counted up to `upTo` (an index range). */
export async function liveDeliveries(trx: Executor, endpointId: string, upTo: number): Promise<number> {
  const [row] = await countLiveRows(trx, endpointId, upTo);
  return Number(row?.n ?? 0);
}

export type NewDelivery = Omit<WebhookDeliveriesTable, 'seq'>;

const DELIVERY_COLUMNS = [
  'id', 'organization_id', 'endpoint_id', 'event_id', 'event_type', 'status', 'attempts', 'due_at', 'lease_token', 'error', 'created_at', 'updated_at',
] as const satisfies readonly (keyof NewDelivery)[];

const insertDeliveryRows = compiledForRows(DELIVERY_COLUMNS, (db, rows: NewDelivery[]) =>
  db.insertInto('webhook_deliveries').values(rows).onConflict((oc) => oc.columns(['endpoint_id', 'event_id']).doNothing()).returning('id'),
);

/** Inserts the fan-out's rows; a row whose (endpoint, event) already exists is skipped. Returns the ids inserted. */
export async function insertDeliveries(trx: Executor, rows: NewDelivery[]): Promise<Set<string>> {
  return new Set((await insertDeliveryRows(trx, rows)).map((r) => r.id));
}

/**
 * Endpoints with deliveries due now (pending, or sending under an expired lease): one index probe per
 * endpoint, so a long queue of one dead endpoint costs no more to find than a short one.
 */
export async function endpointsWithDueDeliveries(db: Executor, now: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('webhook_endpoints as e')
    .select('e.id')
    .where(({ exists, selectFrom }) =>
      exists(selectFrom('webhook_deliveries as d').select('d.id').whereRef('d.endpoint_id', '=', 'e.id').where('d.due_at', '<=', now)),
    )
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
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
 * Takes due deliveries under a lease, up to `limit` for each endpoint asked for: the attempt is counted now and
 * the row is due again when the lease ends, so a crashed worker's attempt is retried, and the lease token on
 * the result write keeps a late worker from overwriting a newer attempt. PostgreSQL: SKIP LOCKED, so
 * concurrent workers take disjoint rows.
 */
export async function claimDeliveries(trx: Transaction<DB>, dialect: Dialect, wants: { endpointId: string; limit: number }[], lease: Lease): Promise<Job[]> {
  const ids: string[] = [];
  for (const { endpointId, limit } of wants) {
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
    for (const r of claimed) ids.push(r.id);
  }
  if (ids.length === 0) return [];
  const rows = await trx
    .selectFrom('webhook_deliveries as d')
    .innerJoin('webhook_endpoints as e', 'e.id', 'd.endpoint_id')
    .innerJoin('events as ev', 'ev.id', 'd.event_id')
    .select([
      'd.id', 'd.endpoint_id', 'd.event_id', 'd.event_type', 'd.attempts', 'e.url', 'e.enabled', 'e.failing_since', 'e.secret_enc',
      'e.previous_secret_enc', 'e.previous_secret_expires_at', 'ev.payload',
    ])
    .where('d.id', 'in', ids)
    .orderBy('d.endpoint_id')
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
}
