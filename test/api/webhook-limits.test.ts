import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call, expectError } from '../helpers/http.js';

/** Every event fans out to each of an organization's endpoints: how many it may register is a documented limit. */
const LIMIT = 3;
let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp({ env: { MAX_WEBHOOKS_PER_ORG: String(LIMIT), WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
});
afterAll(() => t.close());

const createWebhook = (who: Seeded, n: number) =>
  call(t.app, 'POST', '/webhooks', { auth: who.auth, body: { url: `http://127.0.0.1:9/hook-${n}`, events: ['lead.created'] } });

describe('webhook endpoints per organization (MAX_WEBHOOKS_PER_ORG)', () => {
  it('refuses the endpoint beyond the limit with 409 LIMIT_EXCEEDED; deleting one makes room; other organizations are not affected', async () => {
    const a = await seedOrg(t.ctx);
    const b = await seedOrg(t.ctx);
    const ids: string[] = [];
    for (let i = 1; i <= LIMIT; i++) {
      const res = await createWebhook(a, i);
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      ids.push(res.body.data.webhook.id);
    }
    const refused = await createWebhook(a, 99);
    expectError(refused, 409, 'LIMIT_EXCEEDED');
    expect(refused.body.message).toContain(`${LIMIT} webhook endpoints`);
    expect((await createWebhook(b, 1)).status).toBe(201);
    expect((await call(t.app, 'DELETE', `/webhooks/${ids[0]}`, { auth: a.auth })).status).toBe(200);
    expect((await createWebhook(a, 100)).status).toBe(201);
  });

  it('holds when creates race at the limit', async () => {
    const c = await seedOrg(t.ctx);
    const results = await Promise.all(Array.from({ length: LIMIT * 2 }, (_, i) => createWebhook(c, i)));
    expect(results.filter((r) => r.status === 201)).toHaveLength(LIMIT);
    for (const r of results.filter((x) => x.status !== 201)) expectError(r, 409, 'LIMIT_EXCEEDED');
  });
});
