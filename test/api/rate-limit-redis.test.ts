import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';

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
});
