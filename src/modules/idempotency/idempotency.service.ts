import { hash } from 'node:crypto';
import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/database.js';
import type { Transaction } from 'kysely';
import type { DB } from '../../db/schema.js';
import { AppError, validationFailed } from '../../errors.js';
import { canonicalJson } from '../../lib/canonical-json.js';
import type { RequestHasher } from '../../crypto/request-hash.js';
import { inTransaction } from '../../db/transaction.js';
import { claimKey, completeKey, findKey, releaseKey, responseAad, takeOverKey } from './idempotency.store.js';

/** Kept at least 24 hours (contract §3); a claim whose holder crashed is taken over after the lock expires. */
const RETENTION_MS = 24 * 60 * 60 * 1000;
const LOCK_MS = 60_000;
/** Marks a keyed request hash. A stored hash without it is an older release's plain SHA-256. */
const KEYED = 'k1:';

export interface IdempotentRequest {
  organizationId: string;
  /** The raw Idempotency-Key header, or undefined when the client sent none. */
  header: string | undefined;
  method: string;
  path: string;
  body: unknown;
}

export interface StoredResponse<T> {
  status: number;
  body: T;
  replayed: boolean;
}

/** 1–255 printable ASCII characters; a Structured-Field quoted string ("abc") is unwrapped first. */
export function parseIdempotencyKey(header: string): string {
  let key = header.trim();
  if (/^"(?:[^"\\]|\\.)*"$/.test(key)) key = key.slice(1, -1).replace(/\\(.)/g, '$1');
  if (key.length < 1 || key.length > 255 || !/^[\x20-\x7e]+$/.test(key)) {
    throw validationFailed([{ field: 'Idempotency-Key', code: 'invalid_format', message: 'must be 1-255 printable ASCII characters' }]);
  }
  return key;
}

/** The request (method, path, canonical body) as the claim keeps it: a keyed hash, never a plain digest of the body. */
export interface RequestFingerprint {
  /** Stored with the claim: `k1:` and the keyed hash. */
  stored: string;
  /** Whether a stored hash is of this same request. */
  matches(stored: string): boolean;
}

export function requestFingerprint(hasher: RequestHasher, key: string, req: Pick<IdempotentRequest, 'organizationId' | 'method' | 'path' | 'body'>): RequestFingerprint {
  const text = `${req.method} ${req.path}\n${canonicalJson(req.body ?? null)}`;
  const stored = KEYED + hasher.hash(req.organizationId, key, text);
  return {
    stored,
    // An unmarked hash was written, unkeyed, by a release before keyed hashes: honoured until it expires (24 h).
    matches: (existing) => (existing.startsWith(KEYED) ? existing === stored : existing === hash('sha256', text, 'hex')),
  };
}

/**
 * Runs `work` in a transaction exactly once per (organization, Idempotency-Key). The claim row is committed
 * before the work starts, so a concurrent duplicate sees it (409) instead of creating a second resource;
 * the request is kept as its keyed hash, and the response is stored, encrypted (it may hold contact details),
 * in the same transaction as the work.
 */
export async function runIdempotent<T>(
  ctx: Pick<AppContext, 'database' | 'cipher' | 'requestHasher' | 'clock' | 'outbox'>,
  req: IdempotentRequest,
  work: (trx: Transaction<DB>) => Promise<{ status: number; body: T }>,
): Promise<StoredResponse<T>> {
  const db = ctx.database.db;
  if (req.header === undefined) {
    const result = await inTransaction(ctx, work);
    return { ...result, replayed: false };
  }
  const key = parseIdempotencyKey(req.header);
  const fingerprint = requestFingerprint(ctx.requestHasher, key, req);
  const aad = responseAad(req.organizationId, key);
  // Its own (group-committed) transaction, committed before the work starts.
  const replay = await ctx.database.transaction((trx) => claim(trx, ctx, req.organizationId, key, fingerprint));
  if (replay) return { status: replay.status, body: JSON.parse(ctx.cipher.decrypt(replay.body, aad)) as T, replayed: true };
  try {
    const result = await inTransaction(ctx, async (trx) => {
      const r = await work(trx);
      await completeKey(trx, req.organizationId, key, r.status, ctx.cipher.encrypt(JSON.stringify(r.body), aad), resourceIdOf(r.body));
      return r;
    });
    return { ...result, replayed: false };
  } catch (err) {
    await releaseKey(db, req.organizationId, key).catch(() => undefined);
    throw err;
  }
}

/** The id of the one resource a creating response carries (`{data: {<name>: {id}}}`), or null. */
export function resourceIdOf(body: unknown): string | null {
  const data = (body as { data?: unknown } | null)?.data;
  if (typeof data !== 'object' || data === null) return null;
  const ids = Object.values(data).flatMap((v) => (typeof v === 'object' && v !== null && typeof (v as { id?: unknown }).id === 'string' ? [(v as { id: string }).id] : []));
  return ids.length === 1 ? ids[0]! : null;
}

/**
 * Every resource id a stored response names: the one resource of a create, or each item's of a batch
 * (`{data: {results: [{<name>: {id}}]}}`), which is stored without a resource id and found by this when erased.
 */
export function resourceIdsOf(body: unknown): string[] {
  const single = resourceIdOf(body);
  if (single !== null) return [single];
  const results = (body as { data?: { results?: unknown } } | null)?.data?.results;
  if (!Array.isArray(results)) return [];
  return results.flatMap((r) => {
    const id = resourceIdOf({ data: r });
    return id === null ? [] : [id];
  });
}

/** Returns the stored response to replay, or undefined once this caller holds the claim. */
async function claim(
  db: Executor,
  ctx: Pick<AppContext, 'clock'>,
  organizationId: string,
  key: string,
  fingerprint: RequestFingerprint,
): Promise<{ status: number; body: string } | undefined> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const now = ctx.clock.now();
    const lockedUntil = new Date(now.getTime() + LOCK_MS).toISOString();
    const expiresAt = new Date(now.getTime() + RETENTION_MS).toISOString();
    if (await claimKey(db, { organizationId, key, requestHash: fingerprint.stored, lockedUntil, createdAt: now.toISOString(), expiresAt })) return undefined;
    const existing = await findKey(db, organizationId, key);
    if (!existing) continue;
    const expired = existing.expiresAt <= now.toISOString();
    const abandoned = existing.state === 'processing' && existing.lockedUntil <= now.toISOString();
    if (expired || abandoned) {
      if (await takeOverKey(db, organizationId, key, existing.lockedUntil, lockedUntil, fingerprint.stored, expiresAt)) return undefined;
      continue;
    }
    if (!fingerprint.matches(existing.requestHash)) {
      throw new AppError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was already used with a different request');
    }
    if (existing.state === 'processing') {
      throw new AppError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still being processed; retry shortly', {
        headers: { 'retry-after': '1' },
      });
    }
    return { status: existing.responseStatus ?? 200, body: existing.responseBody ?? 'null' };
  }
  throw new AppError('IDEMPOTENCY_KEY_IN_USE', 'A request with this Idempotency-Key is still being processed; retry shortly');
}
