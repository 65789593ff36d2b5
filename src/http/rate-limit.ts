import type { Redis } from 'ioredis';
import type { Clock } from '../lib/clock.js';

export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Milliseconds until the window resets. */
  resetMs: number;
}

/**
 * A fixed window that opens at a key's first request and lasts `windowMs`: at most `limit` requests are
 * admitted per window, exactly, however many instances share the store.
 */
export interface RateLimiter {
  hit(key: string, limit: number, windowMs: number): Promise<RateLimitResult>;
  close(): Promise<void>;
}

function result(count: number, limit: number, resetMs: number): RateLimitResult {
  return { allowed: count <= limit, limit, remaining: Math.max(0, limit - count), resetMs: Math.max(0, resetMs) };
}

/** One process: a map of windows, swept as they expire. */
export class MemoryRateLimiter implements RateLimiter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(private readonly clock: Clock) {
    this.sweeper = setInterval(() => this.sweep(), 60_000).unref();
  }

  async hit(key: string, limit: number, windowMs: number): Promise<RateLimitResult> {
    const now = this.clock.now().getTime();
    let window = this.windows.get(key);
    if (window === undefined || window.resetAt <= now) {
      window = { count: 0, resetAt: now + windowMs };
      this.windows.set(key, window);
    }
    window.count += 1;
    return result(window.count, limit, window.resetAt - now);
  }

  private sweep(): void {
    const now = this.clock.now().getTime();
    for (const [key, window] of this.windows) if (window.resetAt <= now) this.windows.delete(key);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }
}

/** INCR and the window's expiry in one atomic script, so concurrent instances never over-admit. */
const HIT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {count, ttl}`;

/** Shared by every instance pointed at the same Redis (REDIS_URL). */
export class RedisRateLimiter implements RateLimiter {
  constructor(
    private readonly redis: Redis,
    private readonly prefix = 'crm:ratelimit:',
  ) {
    redis.defineCommand('crmRateHit', { numberOfKeys: 1, lua: HIT_SCRIPT });
  }

  async hit(key: string, limit: number, windowMs: number): Promise<RateLimitResult> {
    const [count, ttl] = (await (this.redis as unknown as { crmRateHit(k: string, w: number): Promise<[number, number]> }).crmRateHit(
      this.prefix + key,
      windowMs,
    )) as [number, number];
    return result(count, limit, ttl);
  }

  async close(): Promise<void> {
    await this.redis.quit();
  }
}
