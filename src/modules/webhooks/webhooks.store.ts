import type { Dialect } from '../../config.js';
import type { Executor } from '../../db/database.js';
import type { WebhookEndpointsTable } from '../../db/schema.js';
import type { ListRequest } from '../../lib/list-request.js';
import { columnPosition, columnSort, CREATION_ORDER, readPage, timeRangeConditions, type ListPage } from '../../db/list-page.js';
import { jsonArrayHasAny } from '../../db/json-fields.js';
import { ALL_EVENTS, type DisabledReason } from './webhooks.schemas.js';

/** An endpoint as stored: secrets still encrypted. */
export interface StoredEndpoint {
  id: string;
  organizationId: string;
  url: string;
  description: string | null;
  events: string[];
  enabled: boolean;
  disabledReason: DisabledReason | null;
  failingSince: string | null;
  secretEnc: string;
  previousSecretEnc: string | null;
  previousSecretExpiresAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** The backlog columns belong to the dispatcher (dispatcher.store.ts), never written here. */
type Row = Omit<WebhookEndpointsTable, 'seq' | 'backlog_seq' | 'backlog_txid'>;

export function toStoredEndpoint(r: Row): StoredEndpoint {
  return {
    id: r.id,
    organizationId: r.organization_id,
    url: r.url,
    description: r.description,
    events: JSON.parse(r.events) as string[],
    enabled: Number(r.enabled) === 1,
    disabledReason: r.disabled_reason as DisabledReason | null,
    failingSince: r.failing_since,
    secretEnc: r.secret_enc,
    previousSecretEnc: r.previous_secret_enc,
    previousSecretExpiresAt: r.previous_secret_expires_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function toRow(e: StoredEndpoint): Row {
  return {
    id: e.id,
    organization_id: e.organizationId,
    url: e.url,
    description: e.description,
    events: JSON.stringify(e.events),
    enabled: e.enabled ? 1 : 0,
    disabled_reason: e.disabledReason,
    failing_since: e.failingSince,
    secret_enc: e.secretEnc,
    previous_secret_enc: e.previousSecretEnc,
    previous_secret_expires_at: e.previousSecretExpiresAt,
    created_at: e.createdAt,
    updated_at: e.updatedAt,
  };
}

const COLUMNS = [
  'id', 'organization_id', 'url', 'description', 'events', 'enabled', 'disabled_reason', 'failing_since',
  'secret_enc', 'previous_secret_enc', 'previous_secret_expires_at', 'created_at', 'updated_at',
] as const;

/**
 * How many endpoints the organization has, for its limit. PostgreSQL: the organization's row is locked first
 * (NO KEY UPDATE), so two creates at once count one after the other; SQLite's write transactions are serialized.
 */
export async function countEndpoints(db: Executor, dialect: Dialect, organizationId: string): Promise<number> {
  if (dialect === 'postgres') await db.selectFrom('organizations').select('id').where('id', '=', organizationId).forNoKeyUpdate().execute();
  const { n } = await db.selectFrom('webhook_endpoints').select((eb) => eb.fn.countAll<number>().as('n')).where('organization_id', '=', organizationId).executeTakeFirstOrThrow();
  return Number(n);
}

export async function insertEndpoint(db: Executor, endpoint: StoredEndpoint): Promise<void> {
  await db.insertInto('webhook_endpoints').values(toRow(endpoint)).execute();
}

export async function findEndpoint(db: Executor, organizationId: string, id: string): Promise<StoredEndpoint | undefined> {
  const row = await db.selectFrom('webhook_endpoints').select(COLUMNS).where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  return row && toStoredEndpoint(row);
}

/** Operator lookup (CLI): by id alone, whatever the organization. */
export async function findEndpointById(db: Executor, id: string): Promise<StoredEndpoint | undefined> {
  const row = await db.selectFrom('webhook_endpoints').select(COLUMNS).where('id', '=', id).executeTakeFirst();
  return row && toStoredEndpoint(row);
}

/**
 * The sorts of GET /webhooks and their columns: creation order is `seq` (as before sorts came, so older cursors
 * stay valid). An organization's endpoints are sorted once the (organization, seq) index has found them: no
 * index per sort, as endpoints are a handful per organization (uncapped, though).
 */
const ENDPOINT_SORTS: Record<string, string> = { ...CREATION_ORDER, updatedAt: 'updated_at' };

/** The filters of GET /webhooks: enabled or not, and subscribed to an event type (by name or by `*`). */
export interface EndpointFilter {
  enabled?: boolean | undefined;
  eventType?: string | undefined;
}

/** A page of the organization's endpoints matching `filter`, in the request's sort (db/list-page.ts). */
export async function listEndpoints(db: Executor, dialect: Dialect, organizationId: string, filter: EndpointFilter, request: ListRequest): Promise<ListPage<StoredEndpoint>> {
  let q = db.selectFrom('webhook_endpoints').where('webhook_endpoints.organization_id', '=', organizationId);
  if (filter.enabled !== undefined) q = q.where('webhook_endpoints.enabled', '=', filter.enabled ? 1 : 0);
  if (filter.eventType !== undefined) q = q.where(jsonArrayHasAny(dialect, 'webhook_endpoints.events', [filter.eventType, ALL_EVENTS]));
  for (const c of timeRangeConditions('webhook_endpoints', request.range)) q = q.where(c);
  const key = columnSort('webhook_endpoints', request.sort, ENDPOINT_SORTS);
  const page = await readPage<Row & { seq: number }>(q, key, request, columnPosition(request.sort, ENDPOINT_SORTS), (rows) => rows.select([...COLUMNS, 'seq']).execute());
  return { rows: page.rows.map(toStoredEndpoint), pagination: page.pagination };
}

export async function updateEndpoint(db: Executor, endpoint: StoredEndpoint): Promise<void> {
  const { id: _id, organization_id: _org, created_at: _created, ...changes } = toRow(endpoint);
  await db.updateTable('webhook_endpoints').set(changes).where('organization_id', '=', endpoint.organizationId).where('id', '=', endpoint.id).execute();
}

/** Deletes the endpoint; its deliveries and their attempts go with it (foreign keys cascade). */
export async function deleteEndpoint(db: Executor, organizationId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('webhook_endpoints').where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
