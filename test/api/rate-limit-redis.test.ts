import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';
import { Redis } from 'ioredis';
import { RedisRateLimiter } from '../../src/http/rate-limit.js';

/** Two app instances on one database sharing the rate limit through Redis (runs when TEST_REDIS_URL is set). */
describe.runIf(process.env.TEST_REDIS_URL)('rate limit shared through Redis', () => {
  let one: TestApp;
  let two: TestApp;
  let s: Seeded;
  beforeAll(async () => {
    const prefix = randomBytes(6).toString('hex');
    one = await buildTestApp({ redisPrefix: prefix });
    two = await buildTestApp({ redisPrefix: prefix, sameDatabaseAs: one });
    s = await seedOrg(one.ctx);
  });
  afterAll(async () => {
    await two?.close();
    await one?.close();
  });

  it('admits exactly 120 requests per minute across both instances', async () => {
    const results = await Promise.all(
      Array.from({ length: 150 }, (_, i) => call(i % 2 === 0 ? one.app : two.app, 'GET', '/me', { auth: s.auth })),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((x) => x === 200)).toHaveLength(120);
    expect(statuses.filter((x) => x === 429)).toHaveLength(30);
    const remaining = results.filter((r) => r.status === 200).map((r) => Number(r.headers['x-ratelimit-remaining'])).sort((x, y) => x - y);
    expect(remaining).toEqual(Array.from({ length: 120 }, (_, i) => i));
  });

  it('admits a hit of several units (an MCP batch) whole or not at all; a refused one spends nothing', async () => {
    const limiter = new RedisRateLimiter(new Redis(process.env.TEST_REDIS_URL!), `crm-test:${randomBytes(6).toString('hex')}:`);
    try {
      expect(await limiter.hit('batch', 10, 60_000, 7)).toMatchObject({ allowed: true, remaining: 3 });
      expect(await limiter.hit('batch', 10, 60_000, 4)).toMatchObject({ allowed: false, remaining: 3 });
      expect(await limiter.hit('batch', 10, 60_000, 3)).toMatchObject({ allowed: true, remaining: 0 });
      const refused = await limiter.hit('batch', 10, 60_000);
      expect(refused).toMatchObject({ allowed: false, remaining: 0 });
      expect(refused.resetMs).toBeGreaterThan(0);
    } finally {
      await limiter.close();
    }
  });

  it('decides the hits of one batch (one turn of the event loop, one script call) in the order they were made', async () => {
    const limiter = new RedisRateLimiter(new Redis(process.env.TEST_REDIS_URL!), `crm-test:${randomBytes(6).toString('hex')}:`);
    try {
      const results = await Promise.all([limiter.hit('k', 10, 60_000, 7), limiter.hit('other', 2, 60_000), limiter.hit('k', 10, 60_000, 4), limiter.hit('k', 10, 60_000, 3), limiter.hit('k', 10, 60_000)]);
      expect(results.map((r) => [r.allowed, r.remaining])).toEqual([
        [true, 3],
        [true, 1],
        [false, 3],
        [true, 0],
        [false, 0],
      ]);
      expect(results.every((r) => r.limit === (r === results[1] ? 2 : 10) && r.resetMs > 0 && r.resetMs <= 60_000)).toBe(true);
    } finally {
      await limiter.close();
    }
  });
});
