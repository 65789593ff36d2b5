import { Redis } from 'ioredis';
import type { Config } from './config.js';
import { openDatabase, type Database } from './db/database.js';
import { migrateToLatest } from './db/migrate.js';
import { createFieldCipher, type FieldCipher } from './crypto/field-cipher.js';
import { createBlindIndex, type BlindIndex } from './crypto/blind-index.js';
import { createRequestHasher, type RequestHasher } from './crypto/request-hash.js';
import { createCursorSeal, type CursorSeal } from './crypto/cursor-seal.js';
import { createEntityTagger, type EntityTagger } from './crypto/entity-tag.js';
import { forgetOnBroadcast, stopForgetting } from './crypto/plaintext-eviction.js';
import { loadBlindIndexKey } from './crypto/blind-index-key.store.js';
import { systemClock, type Clock } from './lib/clock.js';
import { OutboxSignal } from './modules/events/outbox-signal.js';
import { MemoryRateLimiter, RedisRateLimiter, type RateLimiter } from './http/rate-limit.js';
import { countingRateLimiter, createMetrics, type Metrics } from './observability/metrics.js';
import { outboxProbe } from './modules/events/outbox-lag.js';

/** Everything a request or a command needs besides its input, built once and passed down explicitly. */
export interface AppContext {
  readonly config: Config;
  readonly database: Database;
  readonly cipher: FieldCipher;
  readonly blindIndex: BlindIndex;
  /** Keys the stored hash of an idempotent request (derived from the blind-index key). */
  readonly requestHasher: RequestHasher;
  /** Seals the cursors handed to clients (lists, the change feed, timelines). */
  readonly cursorSeal: CursorSeal;
  /** Tags the resources the API answers (ETag, a batch result's `etag`, a 412's), keyed (derived from the blind-index key). */
  readonly entityTagger: EntityTagger;
  readonly clock: Clock;
  readonly rateLimiter: RateLimiter;
  /** Woken after commits that wrote events (see db/transaction.ts). */
  readonly outbox: OutboxSignal;
  /** Prometheus metrics of this process (GET /metrics; the webhook dispatcher counts deliveries here). */
  readonly metrics: Metrics;
}

export interface ContextOverrides {
  database?: Database;
  clock?: Clock;
  rateLimiter?: RateLimiter;
  /** Skip migrations (a caller that already ran them). */
  migrate?: boolean;
  /** An extra HTTP thread of a multi-thread server: no migrations, and no process-wide metrics of its own. */
  httpThread?: boolean;
}

/** Opens the database (migrating it), the key ring, the blind index (and the request hasher, cursor seal and entity tagger) and the rate limiter. */
export async function createContext(config: Config, overrides: ContextOverrides = {}): Promise<AppContext> {
  const database = overrides.database ?? openDatabase(config.database);
  if (overrides.migrate !== false && !overrides.httpThread) await migrateToLatest(database);
  const clock = overrides.clock ?? systemClock;
  const cipher = createFieldCipher(config.encryptionKeys, { cacheSize: config.decryptionCacheSize });
  forgetOnBroadcast(cipher);
  const blindIndexKey = await loadBlindIndexKey(database.db, cipher, clock.now());
  const blindIndex = createBlindIndex(blindIndexKey);
  const requestHasher = createRequestHasher(blindIndexKey);
  const cursorSeal = createCursorSeal(blindIndexKey);
  const entityTagger = createEntityTagger(blindIndexKey);
  const limiter =
    overrides.rateLimiter ??
    (config.redisUrl ? new RedisRateLimiter(new Redis(config.redisUrl, { maxRetriesPerRequest: 2 })) : new MemoryRateLimiter(clock));
  const metrics = createMetrics(overrides.httpThread ? { clock } : { outbox: outboxProbe(database), clock });
  const rateLimiter = countingRateLimiter(limiter, metrics.rateLimited);
  return { config, database, cipher, blindIndex, requestHasher, cursorSeal, entityTagger, clock, rateLimiter, outbox: new OutboxSignal(), metrics };
}

export async function closeContext(ctx: AppContext): Promise<void> {
  stopForgetting(ctx.cipher);
  await ctx.rateLimiter.close();
  await ctx.database.close();
}
