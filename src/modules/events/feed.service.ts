import type { AppContext } from '../../context.js';
import { AppError, validationFailed } from '../../errors.js';
import type { Principal, Scope } from '../orgs/principal.js';
import { EVENT_TYPES, type EventType } from './events.js';
import { prunedThrough, pruneEventPrefix, readFeed } from './feed.store.js';
import { comparePositions, type OutboxPosition } from './outbox-order.js';

/** Which read scope shows an event, by the object it is about. */
const SCOPE_OF_OBJECT: Record<string, Scope> = { lead: 'leads:read', account: 'accounts:read', deal: 'deals:read', record: 'records:read', note: 'notes:read', task: 'tasks:read' };

/** The feed carries changes to data; `webhook.test` checks an endpoint and changes nothing, so it stays out. */
export const FEED_EVENT_TYPES = EVENT_TYPES.filter((t) => t !== 'webhook.test');
export const FEED_SCOPES = Object.values(SCOPE_OF_OBJECT);

const scopeOf = (type: EventType): Scope => SCOPE_OF_OBJECT[type.split('.')[0]!]!;

/**
 * The read scopes under which what an endpoint subscribed to `filters` (`*`: every type) receives would be
 * readable, by event type; `webhook.test` carries no data and needs none.
 */
export function readScopesOf(filters: readonly string[]): Map<Scope, EventType[]> {
  const types = filters.includes('*') ? FEED_EVENT_TYPES : (filters as EventType[]).filter((t) => t !== 'webhook.test');
  const byScope = new Map<Scope, EventType[]>();
  for (const type of types) byScope.set(scopeOf(type), [...(byScope.get(scopeOf(type)) ?? []), type]);
  return byScope;
}

const notHandedOut = () =>
  validationFailed([{ field: 'after', code: 'invalid_cursor', message: 'must be a nextCursor GET /events returned to this organization (one handed out before a server upgrade may no longer open: start again without after)' }]);

/** The cursor, sealed for the organization (crypto/cursor-seal.ts): txid and seq in 8 bytes each, so it reads as nothing. */
export function sealFeedCursor(ctx: Pick<AppContext, 'cursorSeal'>, organizationId: string, p: OutboxPosition): string {
  const bytes = Buffer.alloc(16);
  bytes.writeBigUInt64BE(BigInt(p.txid), 0);
  bytes.writeBigUInt64BE(BigInt(p.seq), 8);
  return ctx.cursorSeal.seal('feed', organizationId, bytes);
}

export function openFeedCursor(ctx: Pick<AppContext, 'cursorSeal'>, organizationId: string, cursor: string): OutboxPosition {
  const bytes = ctx.cursorSeal.open('feed', organizationId, cursor);
  if (bytes?.length !== 16) throw notHandedOut();
  return { txid: bytes.readBigUInt64BE(0).toString(), seq: Number(bytes.readBigUInt64BE(8)) };
}

/** The types asked for (all by default), each known and readable with the key's scopes. */
function typesFor(principal: Principal, types: string | undefined): EventType[] {
  const readable = (t: EventType) => principal.key.scopes.includes(scopeOf(t));
  if (types === undefined) return FEED_EVENT_TYPES.filter(readable);
  // `lead.created, deal.created` (a space after the comma) and a trailing comma ask for what they name.
  const asked = [...new Set(types.split(',').map((t) => t.trim()).filter((t) => t !== ''))];
  if (asked.length === 0) {
    throw validationFailed([{ field: 'types', code: 'invalid_value', message: 'names no event type: list them comma-separated (types=lead.created,deal.created), or leave types out for every type' }]);
  }
  const unknown = asked.filter((t) => !(FEED_EVENT_TYPES as readonly string[]).includes(t));
  if (unknown.length > 0) {
    throw validationFailed([{ field: 'types', code: 'invalid_value', message: `Unknown event type ${unknown.join(', ')}; one of ${FEED_EVENT_TYPES.join(', ')}` }]);
  }
  const hidden = (asked as EventType[]).filter((t) => !readable(t));
  if (hidden.length > 0) throw new AppError('INSUFFICIENT_SCOPE', `Reading ${hidden.join(', ')} needs the scope ${[...new Set(hidden.map(scopeOf))].join(', ')}`);
  return asked as EventType[];
}

export interface FeedPage {
  /** The stored webhook bodies (JSON text), oldest first. */
  events: string[];
  nextCursor: string;
}

export async function readEventFeed(
  ctx: Pick<AppContext, 'database' | 'cursorSeal'>,
  principal: Principal,
  query: { after?: string; limit: number; types?: string },
): Promise<FeedPage> {
  const { db, dialect } = ctx.database;
  const types = typesFor(principal, query.types);
  const organizationId = principal.organization.id;
  const asked = query.after === undefined ? undefined : openFeedCursor(ctx, organizationId, query.after);
  const after = asked ?? (await prunedThrough(db));
  const { rows, tail, lastSeq, txidLimit } = await readFeed(db, dialect, { organizationId, after, types, limit: query.limit });
  // Beyond every position drawn: not a cursor of this database (kept across a restore of an older backup).
  if (asked && (asked.seq > lastSeq || BigInt(asked.txid) >= BigInt(txidLimit))) throw notHandedOut();
  // Read after the events: a prune that removed some of them had committed its position by then.
  if (asked && comparePositions(asked, await prunedThrough(db)) < 0) {
    throw new AppError('CURSOR_EXPIRED', 'Events after this cursor are past retention (EVENT_RETENTION_DAYS); start again without `after`');
  }
  // A short page has read every event of the reader's up to the outbox's end: the cursor moves there, past other
  // organizations' and types' events, so that a reader with nothing to see does not fall behind retention.
  const last = rows.length === query.limit ? rows.at(-1)!.position : maxPosition(rows.at(-1)?.position ?? after, tail ?? after);
  // A poll that did not move gets its own cursor back (sealing draws a fresh one each time).
  const nextCursor = asked && comparePositions(last, asked) === 0 ? query.after! : sealFeedCursor(ctx, organizationId, last);
  return { events: rows.map((r) => r.payload), nextCursor };
}

const maxPosition = (a: OutboxPosition, b: OutboxPosition): OutboxPosition => (comparePositions(a, b) >= 0 ? a : b);

const PRUNE_BATCH = 500;

/** Deletes events older than the retention that the webhook dispatcher no longer needs, in small transactions. */
export async function pruneEvents(ctx: Pick<AppContext, 'database' | 'clock' | 'config'>): Promise<number> {
  const now = ctx.clock.now();
  const before = new Date(now.getTime() - ctx.config.eventRetentionDays * 86_400_000).toISOString();
  let total = 0;
  for (;;) {
    const removed = await ctx.database.transaction((trx) => pruneEventPrefix(trx, ctx.database.dialect, { before, now: now.toISOString() }, PRUNE_BATCH));
    total += removed;
    if (removed < PRUNE_BATCH) return total;
  }
}
