import type { Executor } from '../../db/database.js';
import { insertRows } from '../../db/bulk-insert.js';
import { precompileInsert, precompileInsertPair } from '../../db/precompiled.js';
import type { DB } from '../../db/schema.js';
import type { Insertable } from 'kysely';
import type { CrmEvent } from './events.js';

const toRow = (event: CrmEvent) => ({
  id: event.id,
  organization_id: event.organization,
  type: event.type,
  object: event.data.object,
  object_id: event.data.id,
  payload: JSON.stringify(event),
  created_at: event.createdAt,
});

const EVENT_COLUMNS = ['id', 'organization_id', 'type', 'object', 'object_id', 'payload', 'created_at'] as const;
const insertEvent = precompileInsert('events', EVENT_COLUMNS);

/**
 * A one-row insert into `table` and the event that records it, in the caller's transaction: one statement
 * (one round trip) on PostgreSQL, where a single create's cost is its round trips.
 */
export function precompileInsertWithEvent<T extends keyof DB & string>(table: T, columns: readonly (keyof Insertable<DB[T]> & string)[]) {
  const insert = precompileInsertPair({ table, columns }, { table: 'events', columns: EVENT_COLUMNS });
  return (db: Executor, row: Insertable<DB[T]>, event: CrmEvent) => insert(db, row, toRow(event));
}

/** Written in the caller's transaction, next to the change it describes: committed together or not at all. */
export async function recordEvent(db: Executor, event: CrmEvent): Promise<void> {
  await insertEvent(db, toRow(event));
}

/** Many events in the caller's transaction (bulk imports), a few hundred per statement. */
export async function recordEvents(db: Executor, events: readonly CrmEvent[]): Promise<void> {
  if (events.length === 1) return recordEvent(db, events[0]!);
  await insertRows(db, 'events', events.map(toRow));
}

export async function listEvents(db: Executor, organizationId: string, opts: { objectId?: string; afterSeq?: number; limit?: number } = {}): Promise<CrmEvent[]> {
  let q = db.selectFrom('events').select(['payload']).where('organization_id', '=', organizationId);
  if (opts.objectId) q = q.where('object_id', '=', opts.objectId);
  if (opts.afterSeq !== undefined) q = q.where('seq', '>', opts.afterSeq);
  const rows = await q.orderBy('seq').limit(opts.limit ?? 1000).execute();
  return rows.map((r) => JSON.parse(r.payload) as CrmEvent);
}
