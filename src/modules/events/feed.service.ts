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

/** The cursor is opaque to clients: base64url of "<txid>.<seq>" (txid 0 on SQLite). */
export function encodeCursor(p: OutboxPosition): string {
  return Buffer.from(`${p.txid}.${p.seq}`).toString('base64url');
}

const notHandedOut = () => validationFailed([{ field: 'after', code: 'invalid_format', message: 'after must be a nextCursor returned by GET /events' }]);

function decodeCursor(cursor: string): OutboxPosition {
  const match = /^(\d{1,20})\.(\d{1,16})$/.exec(Buffer.from(cursor, 'base64url').toString('latin1'));
  if (!match || Buffer.from(`${match[1]}.${match[2]}`).toString('base64url') !== cursor) throw notHandedOut();
  return { txid: match[1]!, seq: Number(match[2]) };
}

/** The types asked for (all by default), each known and readable with the key's scopes. */
function typesFor(principal: Principal, types: string | undefined): EventType[] {
  const readable = (t: EventType) => principal.key.scopes.includes(scopeOf(t));
  if (types === undefined) return FEED_EVENT_TYPES.filter(readable);
  const asked = [...new Set(types.split(','))];
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
  ctx: Pick<AppContext, 'database'>,
  principal: Principal,
  query: { after?: string; limit: number; types?: string },
): Promise<FeedPage> {
  const { db, dialect } = ctx.database;
  const types = typesFor(principal, query.types);
  const asked = query.after === undefined ? undefined : decodeCursor(query.after);
  const after = asked ?? (await prunedThrough(db));
  const { rows, tail, lastSeq } = await readFeed(db, dialect, { organizationId: principal.organization.id, after, types, limit: query.limit });
  // Beyond every position drawn: not a cursor of this database (forged, or kept across a restore of an older backup).
  if (asked && asked.seq > lastSeq) throw notHandedOut();
  // Read after the events: a prune that removed some of them had committed its position by then.
  if (asked && comparePositions(asked, await prunedThrough(db)) < 0) {
    throw new AppError('CURSOR_EXPIRED', 'Events after this cursor are past retention (EVENT_RETENTION_DAYS); start again without `after`');
  }
  // A short page has read every event of the reader's up to the outbox's end: the cursor moves there, past other
  // organizations' and types' events, so that a reader with nothing to see does not fall behind retention.
  const last = rows.length === query.limit ? rows.at(-1)!.position : maxPosition(rows.at(-1)?.position ?? after, tail ?? after);
  return { events: rows.map((r) => r.payload), nextCursor: encodeCursor(last) };
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
