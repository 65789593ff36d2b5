import type { Redis } from 'ioredis';
import { AppError } from '../errors.js';
import type { Clock } from '../lib/clock.js';

export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Milliseconds until the window resets. */
  resetMs: number;
}

/**
 * A fixed window that opens at a key's first request and lasts `windowMs`: at most `limit` units are
 * admitted per window, exactly, however many instances share the store. A hit of `cost` units (a JSON-RPC
 * batch spends one per message) is admitted whole or not at all, and a refused hit spends nothing, so a
 * batch too large for what is left does not burn the rest of the budget.
 */
export interface RateLimiter {
  hit(key: string, limit: number, windowMs: number, cost?: number): Promise<RateLimitResult>;
  /** Throws (503) when the store the windows live in can't be reached (`/ready`); absent for one in memory. */
  ready?(): Promise<void>;
  close(): Promise<void>;
}

function result(allowed: boolean, count: number, limit: number, resetMs: number): RateLimitResult {
  return { allowed, limit, remaining: Math.max(0, limit - count), resetMs: Math.max(0, resetMs) };
}

/** One process: a map of windows, swept as they expire. */
export class MemoryRateLimiter implements RateLimiter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly clock: Clock) {
    this.sweeper = setInterval(() => this.sweep(), 60_000).unref();
  }

  async hit(key: string, limit: number, windowMs: number, cost = 1): Promise<RateLimitResult> {
    const now = this.clock.now().getTime();
    let window = this.windows.get(key);
    if (window === undefined || window.resetAt <= now) {
      window = { count: 0, resetAt: now + windowMs };
      this.windows.set(key, window);
    }
    const allowed = window.count + cost <= limit;
    if (allowed) window.count += cost;
    return result(allowed, window.count, limit, window.resetAt - now);
  }

  private sweep(): void {
    const now = this.clock.now().getTime();
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }
}

/** Keys a shared table holds at once (windows of keys that called in the last minute); 1.5 MB of memory. */
const SHARED_SLOTS = 65_536;
/** Slots examined for one key before the one whose window ends first is taken over. */
const MAX_PROBES = 64;
/** Per slot: fingerprint (2 × int32), count, in use; then the window's end (float64). 24 bytes. */
const SLOT_INTS = 6;

/** Two 32-bit FNV-1a hashes with different offsets: a 64-bit fingerprint of the key. */
function fingerprint(key: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193) ^ (b >>> 15);
  }
  return [a | 0, b | 0];
}

/**
 * The limiter of one server process whose HTTP threads (HTTP_THREADS) share a budget: the windows live in a
 * SharedArrayBuffer every thread maps, updated under one spin lock held for a few hundred nanoseconds, so
 * the count is exact however requests spread over threads. A key is found by a 64-bit fingerprint with
 * linear probing; expired windows are reused. Only when 64 consecutive slots hold live windows of other keys
 * (tens of thousands of keys calling within a minute) does a key take over the slot closest to its reset.
 */
export class SharedMemoryRateLimiter implements RateLimiter {
  private readonly lock: Int32Array;
  private readonly ints: Int32Array;
  private readonly floats: Float64Array;
  private readonly slots: number;

  static createBuffer(slots = SHARED_SLOTS): SharedArrayBuffer {
    return new SharedArrayBuffer(8 + slots * SLOT_INTS * 4);
  }

  /** `buffer`: from createBuffer, the same in every thread. */
  constructor(
    buffer: SharedArrayBuffer,
    private readonly clock: Clock,
  ) {
    this.lock = new Int32Array(buffer, 0, 1);
    this.slots = (buffer.byteLength - 8) / (SLOT_INTS * 4);
    this.ints = new Int32Array(buffer, 8);
    this.floats = new Float64Array(buffer, 8);
  }

  async hit(key: string, limit: number, windowMs: number, cost = 1): Promise<RateLimitResult> {
    const now = this.clock.now().getTime();
    const [fa, fb] = fingerprint(key);
    while (Atomics.compareExchange(this.lock, 0, 0, 1) !== 0) Atomics.wait(this.lock, 0, 1, 1);
    try {
      const slot = this.slotFor(fa, fb, now);
      const base = slot * SLOT_INTS;
      const ints = this.ints;
      const resetIndex = slot * (SLOT_INTS / 2) + 2;
      if (ints[base + 3] === 0 || ints[base] !== fa || ints[base + 1] !== fb || this.floats[resetIndex]! <= now) {
        ints[base] = fa;
        ints[base + 1] = fb;
        ints[base + 2] = 0;
        ints[base + 3] = 1;
        this.floats[resetIndex] = now + windowMs;
      }
      const count = ints[base + 2]!;
      const allowed = count + cost <= limit;
      if (allowed) ints[base + 2] = count + cost;
      return result(allowed, allowed ? count + cost : count, limit, this.floats[resetIndex]! - now);
    } finally {
      Atomics.store(this.lock, 0, 0);
      Atomics.notify(this.lock, 0, 1);
    }
  }

  /** The key's slot, else the first free or expired one on its probe path, else the one resetting soonest. */
  private slotFor(fa: number, fb: number, now: number): number {
    let reusable = -1;
    let soonest = -1;
    for (let i = 0, slot = (fa >>> 0) % this.slots; i < MAX_PROBES; i++, slot = (slot + 1) % this.slots) {
      const base = slot * SLOT_INTS;
      if (this.ints[base + 3] === 0) return reusable >= 0 ? reusable : slot;
      if (this.ints[base] === fa && this.ints[base + 1] === fb) return slot;
      const resetAt = this.floats[slot * (SLOT_INTS / 2) + 2]!;
      if (resetAt <= now) {
        if (reusable < 0) reusable = slot;
      } else if (soonest < 0 || resetAt < this.floats[soonest * (SLOT_INTS / 2) + 2]!) soonest = slot;
    }
    return reusable >= 0 ? reusable : soonest;
  }

  async close(): Promise<void> {}
}

/**
 * The check, the INCRBY and the window's expiry of every hit of a batch, in order, in one atomic script, so
 * concurrent instances never over-admit (two hits of one key in a batch see each other, as two calls would).
 * KEYS: one per hit. ARGV, three per hit: window ms, cost, limit. Returns {count, ttl, admitted} per hit.
 */
const HITS_SCRIPT = `
local out = {}
for i = 1, #KEYS do
  local window = ARGV[3 * i - 2]
  local cost = tonumber(ARGV[3 * i - 1])
  local count = tonumber(redis.call('GET', KEYS[i]) or '0')
  local admitted = 0
  if count + cost <= tonumber(ARGV[3 * i]) then
    count = redis.call('INCRBY', KEYS[i], cost)
    admitted = 1
    if count == cost then redis.call('PEXPIRE', KEYS[i], window) end
  end
  local ttl = redis.call('PTTL', KEYS[i])
  if ttl < 0 then redis.call('PEXPIRE', KEYS[i], window); ttl = tonumber(window) end
  out[3 * i - 2] = count
  out[3 * i - 1] = ttl
  out[3 * i] = admitted
end
return out`;

interface PendingHit {
  key: string;
  limit: number;
  windowMs: number;
  cost: number;
  resolve(result: RateLimitResult): void;
  reject(err: unknown): void;
}

type HitsCommand = (...args: (string | number)[]) => Promise<number[]>;

/**
 * Redis unreachable (down, restarting, a network split; ioredis gives up on a command after its retries): the
 * request can't be counted, so it is refused as the database's absence is, 503 with Retry-After, never let through
 * uncounted and never a 500.
 */
function storeUnavailable(cause: unknown): AppError {
  return Object.assign(new AppError('SERVICE_UNAVAILABLE', 'The rate limit store (Redis) is not reachable; retry shortly', { headers: { 'retry-after': '1' } }), { cause });
}

/**
 * Shared by every instance pointed at the same Redis (REDIS_URL). The hits of one turn of the event loop (every
 * request whose bytes arrived in one poll, flushed by setImmediate as ioredis's auto-pipelining does) go to
 * Redis as one script call: per hit, ioredis's command, pipeline and reply objects cost more CPU than the
 * request's own work in Redis (20–32 µs of the API's CPU a hit at 16–4 hits a batch, 11–14 µs batched,
 * docs/performance.md). The client needs no auto-pipelining: each batch is one command. On a standalone Redis
 * (a script's keys must share a slot on a cluster).
 */
export class RedisRateLimiter implements RateLimiter {
  private pending: PendingHit[] = [];
  private readonly hits: HitsCommand;

  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'crm:ratelimit:',
  ) {
    redis.defineCommand('crmRateHits', { lua: HITS_SCRIPT });
    const commands = redis as unknown as { crmRateHits: HitsCommand };
    this.hits = (...args) => commands.crmRateHits(...args);
    // A lost connection reaches the requests (503, logged with each); without a listener ioredis prints every
    // reconnection attempt to stderr.
    redis.on('error', () => undefined);
  }

  hit(key: string, limit: number, windowMs: number, cost = 1): Promise<RateLimitResult> {
    return new Promise((resolve, reject) => {
      if (this.pending.length === 0) setImmediate(() => this.flush());
      this.pending.push({ key: this.prefix + key, limit, windowMs, cost, resolve, reject });
    });
  }

  private flush(): void {
    const batch = this.pending;
    this.pending = [];
    const args: (string | number)[] = [batch.length];
    for (const hit of batch) args.push(hit.key);
    for (const hit of batch) args.push(hit.windowMs, hit.cost, hit.limit);
    this.hits(...args).then(
      (out) => batch.forEach((hit, i) => hit.resolve(result(out[3 * i + 2] === 1, out[3 * i]!, hit.limit, out[3 * i + 1]!))),
      (err: unknown) => {
        const unavailable = storeUnavailable(err);
        batch.forEach((hit) => hit.reject(unavailable));
      },
    );
  }

  async ready(): Promise<void> {
    await this.redis.ping().catch((err: unknown) => {
      throw storeUnavailable(err);
    });
  }

  async close(): Promise<void> {
    // quit waits for a connection that may never come back: then the socket is simply dropped.
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
