import type { Executor } from '../../db/database.js';
import type { DeliveryStatus } from '../../modules/webhooks/webhooks.schemas.js';

export interface LastDelivery {
  eventType: string;
  status: DeliveryStatus;
  attempts: number;
  updatedAt: string;
}

/**
 * The newest delivery of each endpoint on a page of the list: one indexed read per endpoint
 * ((endpoint_id, seq), newest first), however long the logs are.
 */
export async function lastDeliveries(db: Executor, endpointIds: readonly string[]): Promise<Map<string, LastDelivery>> {
  const rows = await Promise.all(
    endpointIds.map((id) =>
      db.selectFrom('webhook_deliveries').select(['endpoint_id', 'event_type', 'status', 'attempts', 'updated_at']).where('endpoint_id', '=', id).orderBy('seq', 'desc').limit(1).executeTakeFirst(),
    ),
  );
  return new Map(
    rows.flatMap((r) => (r ? [[r.endpoint_id, { eventType: r.event_type, status: r.status as DeliveryStatus, attempts: Number(r.attempts), updatedAt: r.updated_at }] as const] : [])),
  );
}
