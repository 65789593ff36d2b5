import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { addKey, seedOrg, type Seeded } from '../helpers/seed.js';
import { call, expectError } from '../helpers/http.js';
import { Receiver, eventually } from '../helpers/receiver.js';
import { WebhookDispatcher } from '../../src/modules/webhooks/dispatcher.js';
import { startMetricsServer } from '../../src/observability/metrics-server.js';

const TOKEN = 'metrics-token-0123456789abcdef';

/** The value of one sample line `name{labels} value` (labels given in the order prom-client prints them). */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('GET /metrics', () => {
  let t: TestApp;
  let s: Seeded;
  const scrape = async () => {
    const res = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.statusCode).toBe(200);
    return res;
  };

  beforeAll(async () => {
    t = await buildTestApp({ env: { METRICS_TOKEN: TOKEN } });
    s = await seedOrg(t.ctx);
  });
  afterAll(() => t.close());

  it('is refused without the token or with a wrong one, in the error envelope', async () => {
    expectError(await call(t.app, 'GET', '/metrics'), 401, 'UNAUTHORIZED');
    expectError(await call(t.app, 'GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN}x` } }), 401, 'UNAUTHORIZED');
    expectError(await call(t.app, 'GET', '/metrics', { auth: s.auth }), 401, 'UNAUTHORIZED');
  });

  it('counts requests and their latency by route pattern and status, never by raw URL', async () => {
    const id = 'abcdefabcdefabcdefabcdef';
    for (let i = 0; i < 3; i++) await call(t.app, 'GET', `/leads/${id}`, { auth: s.auth });
    await call(t.app, 'GET', '/no/such/route/x1');
    const res = await scrape();
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(res.headers['cache-control']).toBe('no-store');
    const text = res.body;
    expect(sample(text, 'crm_http_requests_total{method="GET",route="/api/public/v1/leads/:id",status="404"}')).toBe(3);
    expect(sample(text, 'crm_http_request_duration_seconds_count{method="GET",route="/api/public/v1/leads/:id",status="404"}')).toBe(3);
    expect(sample(text, 'crm_http_request_duration_seconds_bucket{le="+Inf",method="GET",route="/api/public/v1/leads/:id",status="404"}')).toBe(3);
    expect(sample(text, 'crm_http_requests_total{method="GET",route="unmatched",status="404"}')).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain(id);
    expect(text).not.toContain('x1');
    expect(text).toContain('process_cpu_seconds_total');
  });

  it('counts rate-limit rejections', async () => {
    const limited = await addKey(t.ctx, s.orgId, ['leads:read'], { rateLimitPerMinute: 2 });
    const before = sample((await scrape()).body, 'crm_rate_limit_rejections_total') ?? 0;
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await call(t.app, 'GET', '/me', { auth: limited.auth })).status);
    expect(statuses).toEqual([200, 200, 429, 429, 429]);
    expect(sample((await scrape()).body, 'crm_rate_limit_rejections_total')).toBe(before + 3);
  });

  it('reports the outbox: newest event, what the dispatcher has not fanned out yet and since when; deliveries', async () => {
    const first = (await scrape()).body;
    const before = sample(first, 'crm_outbox_newest_event_seq')!;
    const backlog = sample(first, 'crm_outbox_undispatched_events')!;
    for (const name of ['One', 'Two']) expect((await call(t.app, 'POST', '/leads', { auth: s.auth, body: { name } })).status).toBe(201);
    t.ctx.metrics.deliveries.inc({ outcome: 'delivered' });
    t.ctx.metrics.deliveries.inc({ outcome: 'retrying' }, 2);
    const text = (await scrape()).body;
    expect(sample(text, 'crm_outbox_newest_event_seq')).toBe(before + 2);
    // No dispatcher runs in this test app: the new events wait behind the fan-out cursor.
    expect(sample(text, 'crm_outbox_undispatched_events')).toBe(backlog + 2);
    expect(sample(text, 'crm_outbox_oldest_undispatched_age_seconds')).toBeGreaterThanOrEqual(0);
    expect(sample(text, 'crm_webhook_deliveries_total{outcome="delivered"}')).toBe(1);
    expect(sample(text, 'crm_webhook_deliveries_total{outcome="retrying"}')).toBe(2);
  });
});

describe('without METRICS_TOKEN', () => {
  it('there is no /metrics route at all', async () => {
    const t = await buildTestApp();
    try {
      expectError(await call(t.app, 'GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } }), 404, 'ROUTE_NOT_FOUND');
    } finally {
      await t.close();
    }
  });
});

describe('deliveries counted by the dispatcher', () => {
  it('each attempt counts under its outcome, and the outbox backlog drains to zero', async () => {
    const t = await buildTestApp({ env: { METRICS_TOKEN: TOKEN, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_TIMEOUT_MS: '5000' } });
    const receiver = await Receiver.start();
    const dispatcher = new WebhookDispatcher(t.ctx, { pollIntervalMs: 20, random: () => 0.5 }).start();
    try {
      const s = await seedOrg(t.ctx);
      receiver.on('/failing', (res) => res.writeHead(500).end());
      for (const path of ['/ok', '/failing']) {
        expect((await call(t.app, 'POST', '/webhooks', { auth: s.auth, body: { url: receiver.url(path), events: ['lead.created'] } })).status).toBe(201);
      }
      expect((await call(t.app, 'POST', '/leads', { auth: s.auth, body: { name: 'Delivered' } })).status).toBe(201);
      await receiver.waitFor('/ok', 1);
      await receiver.waitFor('/failing', 1);
      await dispatcher.settled();
      const text = await eventually(async () => {
        const res = await t.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
        if (sample(res.body, 'crm_webhook_deliveries_total{outcome="retrying"}') !== 1) throw new Error('not yet counted');
        return res.body;
      });
      expect(sample(text, 'crm_webhook_deliveries_total{outcome="delivered"}')).toBe(1);
      expect(sample(text, 'crm_outbox_undispatched_events')).toBe(0);
      expect(sample(text, 'crm_outbox_oldest_undispatched_age_seconds')).toBe(0);
    } finally {
      await dispatcher.stop();
      await receiver.close();
      await t.close();
    }
  });
});

describe('METRICS_PORT (crm worker, which has no API port)', () => {
  it('serves the same registry with the same token rule, and nothing else', async () => {
    const t = await buildTestApp();
    const server = await startMetricsServer(t.ctx.metrics, { host: '127.0.0.1', port: 0, token: TOKEN });
    try {
      t.ctx.metrics.deliveries.inc({ outcome: 'failed' });
      const url = `http://127.0.0.1:${server.port}`;
      expect((await fetch(`${url}/metrics`)).status).toBe(401);
      expect((await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}x` } })).status).toBe(401);
      expect((await fetch(`${url}/other`, { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(404);
      const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(res.status).toBe(200);
      expect(sample(await res.text(), 'crm_webhook_deliveries_total{outcome="failed"}')).toBe(1);
    } finally {
      await server.close();
      await t.close();
    }
  });

  it('is refused without METRICS_TOKEN', async () => {
    await expect(buildTestApp({ env: { METRICS_PORT: '9464' } })).rejects.toThrow(/METRICS_PORT needs METRICS_TOKEN/);
  });
});
