import type { Executor } from '../../db/database.js';
import type { EncryptedColumn } from '../../crypto/encrypted-column.js';

/** A stored response may hold contact details: sealed, bound to its organization and key. */
export function responseAad(organizationId: string, key: string): string {
  return `idempotency:${organizationId}:${key}`;
}

export const IDEMPOTENCY_ENCRYPTED_COLUMNS: EncryptedColumn[] = [
  { table: 'idempotency_keys', column: 'response_body', key: ['organization_id', 'key'], aad: (row) => responseAad(String(row.organization_id), String(row.key)) },
];

export interface IdempotencyRow {
  requestHash: string;
  state: 'processing' | 'done';
  responseStatus: number | null;
  responseBody: string | null;
  lockedUntil: string;
  expiresAt: string;
}

export async function claimKey(
  db: Executor,
  row: { organizationId: string; key: string; requestHash: string; lockedUntil: string; createdAt: string; expiresAt: string },
): Promise<boolean> {
  const result = await db
    .insertInto('idempotency_keys')
    .values({
      organization_id: row.organizationId,
      key: row.key,
      request_hash: row.requestHash,
      state: 'processing',
      response_status: null,
      response_body: null,
      locked_until: row.lockedUntil,
      created_at: row.createdAt,
      expires_at: row.expiresAt,
    })
    .onConflict((oc) => oc.columns(['organization_id', 'key']).doNothing())
    .executeTakeFirst();
  return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
}

export async function findKey(db: Executor, organizationId: string, key: string): Promise<IdempotencyRow | undefined> {
  const row = await db
    .selectFrom('idempotency_keys')
    .select(['request_hash', 'state', 'response_status', 'response_body', 'locked_until', 'expires_at'])
    .where('organization_id', '=', organizationId)
    .where('key', '=', key)
    .executeTakeFirst();
  return row && {
    requestHash: row.request_hash,
    state: row.state,
    responseStatus: row.response_status,
    responseBody: row.response_body,
    lockedUntil: row.locked_until,
    expiresAt: row.expires_at,
  };
}

/** Compare-and-set on the lock time: exactly one caller takes over an abandoned (crashed) claim. */
export async function takeOverKey(db: Executor, organizationId: string, key: string, previousLock: string, lockedUntil: string, requestHash: string, expiresAt: string): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_keys')
    .set({ locked_until: lockedUntil, request_hash: requestHash, expires_at: expiresAt, state: 'processing', response_status: null, response_body: null, resource_id: null })
    .where('organization_id', '=', organizationId)
    .where('key', '=', key)
    .where('locked_until', '=', previousLock)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** `resourceId`: the resource the response describes, so an erasure of that resource removes the response too. */
export async function completeKey(db: Executor, organizationId: string, key: string, status: number, body: string, resourceId: string | null): Promise<void> {
  await db
    .updateTable('idempotency_keys')
    .set({ state: 'done', response_status: status, response_body: body, resource_id: resourceId })
    .where('organization_id', '=', organizationId)
    .where('key', '=', key)
    .execute();
}

export async function releaseKey(db: Executor, organizationId: string, key: string): Promise<void> {
  await db.deleteFrom('idempotency_keys').where('organization_id', '=', organizationId).where('key', '=', key).where('state', '=', 'processing').execute();
}

export async function pruneExpiredKeys(db: Executor, now: string): Promise<number> {
  const result = await db.deleteFrom('idempotency_keys').where('expires_at', '<', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}
