import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';

/**
 * REDIS_URL names a Redis that does not answer (nothing listens on the port): every API request needs its rate
 * limit window, so it is refused as when the database is away, 503 SERVICE_UNAVAILABLE with Retry-After in the one
 * envelope, never a 500 and never let through uncounted; /ready says so, and the process lives on.
 */
describe('Redis unreachable under the shared rate limit', () => {
  let t: TestApp;
  let s: Seeded;
  beforeAll(async () => {
    t = await buildTestApp({ env: { REDIS_URL: 'redis://127.0.0.1:1' } });
    s = await seedOrg(t.ctx);
  });
  afterAll(() => t.close());

  it('answers 503 with Retry-After to API requests, and /ready is 503', async () => {
    const res = await call(t.app, 'GET', '/leads', { auth: s.auth });
    expect(res.status).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.body).toMatchObject({ status: false, code: 'SERVICE_UNAVAILABLE', message: 'The rate limit store (Redis) is not reachable; retry shortly' });
    const created = await call(t.app, 'POST', '/leads', { auth: s.auth, body: { name: 'Never Stored' } });
    expect(created.status).toBe(503);
    const ready = await t.app.inject({ method: 'GET', url: '/ready' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json()).toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect((await t.app.inject({ method: 'GET', url: '/health' })).statusCode).toBe(200);
  });
});
