import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAppWithSharedSchemas, buildTestApp, type TestApp } from '../helpers/test-app.js';
import { addKey, seedOrg, type Seeded } from '../helpers/seed.js';
import type { Scope } from '../../src/modules/orgs/principal.js';
import { call, expectError } from '../helpers/http.js';
import { checkWebhookInput } from '../../src/modules/webhooks/webhooks.service.js';
import { ManualClock } from '../../src/lib/clock.js';

let t: TestApp;
let strict: TestApp;
let a: Seeded;
let b: Seeded;

beforeAll(async () => {
  t = await buildTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  // Same database, production network policy: https and public addresses only.
  strict = await buildTestApp({ sameDatabaseAs: t });
  a = await seedOrg(t.ctx);
  b = await seedOrg(t.ctx);
});
afterAll(async () => {
  await strict.close();
  await t.close();
});

const create = (who: Seeded, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  call(t.app, 'POST', '/webhooks', { auth: who.auth, body, headers });
const hook = async (who: Seeded, extra: Record<string, unknown> = {}) => {
  const res = await create(who, { url: 'http://127.0.0.1:9/hook', events: ['lead.created'], ...extra });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.webhook;
};

describe('who may direct events to a URL', () => {
  // A key with webhooks:write alone must not be able to receive, at a URL of its choosing, what it may not read.
  const keyOf = async (scopes: Scope[]) => (await addKey(t.ctx, a.orgId, scopes)).auth;
  const url = 'http://127.0.0.1:9/exfiltrate';

  it('creating an endpoint takes the read scope of every event type it subscribes to (every read scope for *)', async () => {
    const writer = await keyOf(['webhooks:write']);
    const all = await call(t.app, 'POST', '/webhooks', { auth: writer, body: { url, events: ['*'] } });
    expectError(all, 403, 'INSUFFICIENT_SCOPE');
    expect(all.body.message).toBe(
      'Sending every event (*) to an endpoint needs the scope leads:read, accounts:read, deals:read, records:read, notes:read, tasks:read: a key may direct to a URL only the events it can read',
    );
    const some = await call(t.app, 'POST', '/webhooks', { auth: writer, body: { url, events: ['lead.created', 'deal.stage_changed'] } });
    expectError(some, 403, 'INSUFFICIENT_SCOPE');
    expect(some.body.message).toContain('Sending lead.created, deal.stage_changed to an endpoint needs the scope leads:read, deals:read');
    // The test event carries no data: an endpoint for it alone needs no read scope.
    expect((await call(t.app, 'POST', '/webhooks', { auth: writer, body: { url, events: ['webhook.test'] } })).status).toBe(201);
    const leadsReader = await keyOf(['webhooks:write', 'leads:read']);
    expect((await call(t.app, 'POST', '/webhooks', { auth: leadsReader, body: { url, events: ['lead.created', 'lead.erased'] } })).status).toBe(201);
    expectError(await call(t.app, 'POST', '/webhooks', { auth: leadsReader, body: { url, events: ['*'] } }), 403, 'INSUFFICIENT_SCOPE');
    const everything = await keyOf(['webhooks:write', 'leads:read', 'accounts:read', 'deals:read', 'records:read', 'notes:read', 'tasks:read']);
    expect((await call(t.app, 'POST', '/webhooks', { auth: everything, body: { url, events: ['*'] } })).status).toBe(201);
  });

  it("changing an endpoint's URL or events takes the read scopes of the events it then receives; other changes don't", async () => {
    const ops = (await create(a, { url: 'http://127.0.0.1:9/ops', events: ['*'], description: 'Ops' })).body.data.webhook;
    const writer = await keyOf(['webhooks:write', 'leads:read']);
    const moved = await call(t.app, 'PATCH', `/webhooks/${ops.id}`, { auth: writer, body: { url } });
    expectError(moved, 403, 'INSUFFICIENT_SCOPE');
    expect(moved.body.message).toContain('Sending every event (*) to an endpoint needs the scope accounts:read, deals:read, records:read, notes:read, tasks:read');
    expectError(await call(t.app, 'PATCH', `/webhooks/${ops.id}`, { auth: writer, body: { events: ['deal.created'] } }), 403, 'INSUFFICIENT_SCOPE');
    expect((await call(t.app, 'GET', `/webhooks/${ops.id}`, { auth: a.auth })).body.data.webhook).toMatchObject({ url: 'http://127.0.0.1:9/ops', events: ['*'] });
    expect((await call(t.app, 'PATCH', `/webhooks/${ops.id}`, { auth: writer, body: { description: 'Ops channel', enabled: false } })).status).toBe(200);
    // Narrowed to what the key reads, the endpoint may go where the key says.
    const narrowed = await call(t.app, 'PATCH', `/webhooks/${ops.id}`, { auth: writer, body: { url, events: ['lead.created'] } });
    expect(narrowed.status, JSON.stringify(narrowed.body)).toBe(200);
  });
});

describe('POST /webhooks', () => {
  it('registers an endpoint and returns its whsec_ secret once', async () => {
    const res = await create(a, { url: 'http://127.0.0.1:9/hook', events: ['lead.created', 'lead.updated'], description: 'Sync' });
    expect(res.status).toBe(201);
    const webhook = res.body.data.webhook;
    expect(webhook).toMatchObject({
      url: 'http://127.0.0.1:9/hook',
      events: ['lead.created', 'lead.updated'],
      description: 'Sync',
      enabled: true,
      disabledReason: null,
      failingSince: null,
      previousSecretExpiresAt: null,
    });
    expect(webhook.id).toMatch(/^[0-9a-f]{24}$/);
    expect(webhook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const read = await call(t.app, 'GET', `/webhooks/${webhook.id}`, { auth: a.auth });
    expect(read.status).toBe(200);
    expect(read.body.data.webhook).not.toHaveProperty('secret');
    expect(read.body.data.webhook).toMatchObject({ id: webhook.id, url: webhook.url });
    expect(JSON.stringify(read.body)).not.toContain(webhook.secret.slice(6));
  });

  it('stores the secret encrypted', async () => {
    const webhook = await hook(a);
    const row = await t.ctx.database.db.selectFrom('webhook_endpoints').selectAll().where('id', '=', webhook.id).executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(webhook.secret.slice(6));
    expect(row.secret_enc).toMatch(/^v1\./);
  });

  it('accepts "*" and enabled: false', async () => {
    const webhook = await hook(a, { events: ['*'], enabled: false });
    expect(webhook).toMatchObject({ events: ['*'], enabled: false, disabledReason: 'DISABLED_BY_USER' });
  });

  it('lists every bad field at once', async () => {
    const errors = expectError(await create(a, { url: 'not a url', events: ['lead.exploded'], description: 5, colour: 'red' }), 400, 'VALIDATION_FAILED');
    expect(Object.fromEntries(errors.map((e) => [e.field, e.code]))).toEqual({
      url: 'invalid_format',
      'events.0': 'invalid_value',
      description: 'invalid_type',
      colour: 'unknown_field',
    });
    const missing = expectError(await create(a, { events: [] }), 400, 'VALIDATION_FAILED');
    expect(Object.fromEntries(missing.map((e) => [e.field, e.code]))).toEqual({ url: 'required', events: 'too_short' });
    const dup = expectError(await create(a, { url: 'http://127.0.0.1/', events: ['lead.created', 'lead.created'] }), 400, 'VALIDATION_FAILED');
    expect(dup[0]).toMatchObject({ field: 'events', code: 'duplicate' });
  });

  it('refuses "*" mixed with event types', async () => {
    const errors = expectError(await create(a, { url: 'http://127.0.0.1/', events: ['*', 'lead.created'] }), 400, 'VALIDATION_FAILED');
    expect(errors).toEqual([{ field: 'events', code: 'invalid_value', message: expect.stringContaining('"*"') }]);
  });

  it('replays the same answer, secret included, for a repeated Idempotency-Key', async () => {
    const body = { url: 'http://127.0.0.1:9/idem', events: ['*'] };
    const first = await create(a, body, { 'idempotency-key': 'wh-1' });
    const again = await create(a, body, { 'idempotency-key': 'wh-1' });
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.data.webhook).toEqual(first.body.data.webhook);
    const list = await call(t.app, 'GET', '/webhooks?limit=100', { auth: a.auth });
    expect(list.body.data.webhooks.filter((w: { url: string }) => w.url === body.url)).toHaveLength(1);
  });
});

describe('SSRF guard at registration', () => {
  const blocked = [
    ['http://example.com/hook', /https/],
    ['https://127.0.0.1/hook', /loopback/],
    ['https://2130706433/hook', /loopback/], // decimal
    ['https://0x7f000001/hook', /loopback/], // hex
    ['https://0177.0.0.1/hook', /loopback/], // octal
    ['https://127.1/hook', /loopback/], // short form
    ['https://[::1]/hook', /loopback/],
    ['https://[::ffff:127.0.0.1]/hook', /loopback/], // IPv4-mapped IPv6
    ['https://[::ffff:a9fe:a9fe]/hook', /metadata/],
    ['https://169.254.169.254/latest/meta-data', /metadata/],
    ['https://10.1.2.3/hook', /private/],
    ['https://192.168.0.10/hook', /private/],
    ['https://100.64.0.1/hook', /cgnat/],
    ['https://[fe80::1]/hook', /link-local/],
    ['https://localhost/hook', /loopback/],
    ['https://user:pass@example.com/hook', /username/],
  ] as const;

  it.each(blocked)('refuses %s', async (url, reason) => {
    const errors = expectError(await call(strict.app, 'POST', '/webhooks', { auth: a.auth, body: { url, events: ['*'] } }), 400, 'VALIDATION_FAILED');
    expect(errors).toEqual([{ field: 'url', code: 'not_allowed', message: expect.stringMatching(reason) }]);
  });

  it('checks a changed URL on PATCH too', async () => {
    const webhook = await hook(a);
    const errors = expectError(await call(strict.app, 'PATCH', `/webhooks/${webhook.id}`, { auth: a.auth, body: { url: 'https://0x7f.1/' } }), 400, 'VALIDATION_FAILED');
    expect(errors[0]).toMatchObject({ field: 'url', code: 'not_allowed' });
  });

  it('resolves host names and refuses one that points inside (injected resolver)', async () => {
    const inside = checkWebhookInput(strict.ctx, { url: 'https://hooks.example.com/in' }, { resolveHost: async () => ['93.184.216.34', '127.0.0.1'] });
    await expect(inside).rejects.toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'url', code: 'not_allowed', message: expect.stringMatching(/loopback/) }] });
    await expect(checkWebhookInput(strict.ctx, { url: 'https://hooks.example.com/in' }, { resolveHost: async () => ['93.184.216.34'] })).resolves.toBeUndefined();
    await expect(checkWebhookInput(strict.ctx, { url: 'https://nowhere.invalid/' }, { resolveHost: async () => { throw new Error('ENOTFOUND'); } }))
      .rejects.toMatchObject({ errors: [{ field: 'url', message: expect.stringMatching(/could not be resolved/) }] });
  });

  it('accepts a public https literal', async () => {
    const res = await call(strict.app, 'POST', '/webhooks', { auth: a.auth, body: { url: 'https://93.184.216.34/hook', events: ['*'] } });
    expect(res.status).toBe(201);
  });
});

describe('GET /webhooks', () => {
  it('lists the organization’s endpoints newest first, paginated, without secrets', async () => {
    const org = await seedOrg(t.ctx);
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await hook(org, { description: `n${i}` })).id);
    const page1 = await call(t.app, 'GET', '/webhooks?limit=2', { auth: org.auth });
    expect(page1.status).toBe(200);
    expect(page1.body.data.webhooks.map((w: { id: string }) => w.id)).toEqual([ids[2], ids[1]]);
    expect(page1.body.data.pagination).toEqual({ page: 1, limit: 2, total: 3, totalPages: 2, hasMore: true, nextCursor: expect.any(String) });
    const page2 = await call(t.app, 'GET', '/webhooks?limit=2&page=2', { auth: org.auth });
    expect(page2.body.data.webhooks.map((w: { id: string }) => w.id)).toEqual([ids[0]]);
    expect(JSON.stringify(page1.body)).not.toContain('whsec_');
  });

  it('sorts by createdAt or updatedAt, each way, by page and by cursor; a cursor keeps to its sort', async () => {
    // A second app on the same database, on a clock the test moves: every create and change at its own second.
    const clock = new ManualClock('2026-11-01T00:00:00.000Z');
    const timed = await buildTestApp({ sameDatabaseAs: t, clock, env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
    try {
      const org = await seedOrg(timed.ctx, { rateLimitPerMinute: 100_000 });
      const as = (method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown) => call(timed.app, method, path, { auth: org.auth, body });
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) {
        clock.advance(1000);
        ids.push((await as('POST', '/webhooks', { url: `http://127.0.0.1:9/hook${i}`, events: ['*'] })).body.data.webhook.id);
      }
      // Changed out of creation order: 1, then 0.
      for (const i of [1, 0]) {
        clock.advance(1000);
        expect((await as('PATCH', `/webhooks/${ids[i]}`, { description: 'changed' })).status).toBe(200);
      }
      const [h0, h1, h2, h3] = ids;
      const expected: Record<string, (string | undefined)[]> = {
        '-createdAt': [h3, h2, h1, h0],
        createdAt: [h0, h1, h2, h3],
        '-updatedAt': [h0, h1, h3, h2],
        updatedAt: [h2, h3, h1, h0],
      };
      const list = async (query: string) => {
        const res = await as('GET', `/webhooks?${query}`);
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        return { ids: res.body.data.webhooks.map((w: { id: string }) => w.id) as string[], pagination: res.body.data.pagination };
      };
      for (const [sort, order] of Object.entries(expected)) {
        for (const limit of [1, 3]) {
          const byPage: string[] = [];
          for (let page = 1; ; page++) {
            const { ids: got, pagination } = await list(`sort=${sort}&limit=${limit}&page=${page}`);
            expect(pagination.total).toBe(order.length);
            byPage.push(...got);
            if (!pagination.hasMore) break;
          }
          expect(byPage, `${sort} by page, limit ${limit}`).toEqual(order);
          const first = await list(`sort=${sort}&limit=${limit}`);
          const byCursor = [...first.ids];
          for (let cursor = first.pagination.nextCursor; cursor !== null; ) {
            const next = await list(`sort=${sort}&limit=${limit}&after=${encodeURIComponent(cursor)}`);
            byCursor.push(...next.ids);
            expect(byCursor.length).toBeLessThanOrEqual(order.length);
            cursor = next.pagination.nextCursor;
          }
          expect(byCursor, `${sort} by cursor, limit ${limit}`).toEqual(order);
        }
      }
      expect((await list('limit=100')).ids).toEqual(expected['-createdAt']);
      const byUpdate = (await list('sort=updatedAt&limit=1')).pagination.nextCursor as string;
      for (const sort of ['-updatedAt', undefined]) {
        const res = await as('GET', `/webhooks?after=${encodeURIComponent(byUpdate)}${sort ? `&sort=${sort}` : ''}`);
        expect(expectError(res, 400, 'VALIDATION_FAILED').map((e) => e.field)).toEqual(['after']);
      }
      for (const sort of ['name', 'url', 'UpdatedAt']) {
        expect(expectError(await as('GET', `/webhooks?sort=${sort}`), 400, 'VALIDATION_FAILED').map((e) => e.field)).toEqual(['sort']);
      }
    } finally {
      await timed.close();
    }
  });
});

describe('GET /webhooks filters: enabled and eventType', () => {
  it('keeps the enabled or disabled endpoints, those receiving an event type (by name or *), and both together, by page and by cursor', async () => {
    const org = await seedOrg(t.ctx);
    const mine = async (events: string[], extra: Record<string, unknown> = {}) => (await hook(org, { events, ...extra })).id as string;
    const named = await mine(['lead.created']);
    const all = await mine(['*']);
    const off = await mine(['deal.stage_changed', 'lead.created'], { enabled: false });
    const stopped = await mine(['deal.created']);
    expect((await call(t.app, 'PATCH', `/webhooks/${stopped}`, { auth: org.auth, body: { enabled: false } })).status).toBe(200);
    const list = async (query: string) => {
      const res = await call(t.app, 'GET', `/webhooks?sort=createdAt&${query}`, { auth: org.auth });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.data as { webhooks: { id: string; enabled: boolean }[]; pagination: { total?: number; nextCursor: string | null } };
    };
    const walk = async (query: string) => {
      const out: string[] = [];
      let page = await list(`limit=1&${query}`);
      for (;;) {
        out.push(...page.webhooks.map((w) => w.id));
        if (page.pagination.nextCursor === null) return out;
        page = await list(`limit=1&${query}&after=${encodeURIComponent(page.pagination.nextCursor)}`);
      }
    };
    const cases: [string, string[]][] = [
      ['enabled=true', [named, all]],
      ['enabled=false', [off, stopped]],
      ['eventType=lead.created', [named, all, off]],
      ['eventType=deal.stage_changed', [all, off]],
      ['eventType=task.due', [all]],
      ['eventType=lead.created&enabled=false', [off]],
      ['eventType=deal.created&enabled=true', [all]],
      ['eventType=deal.created&enabled=false', [stopped]],
      ['eventType=lead.created&enabled=true&createdAfter=2000-01-01T00:00:00%2B01:00', [named, all]],
      ['enabled=true&createdAfter=2100-01-01T00:00:00Z', []],
    ];
    for (const [query, expected] of cases) {
      const page = await list(`limit=100&${query}`);
      expect(page.webhooks.map((w) => w.id), query).toEqual(expected);
      expect(page.pagination.total, query).toBe(expected.length);
      expect(await walk(query), `${query} by cursor`).toEqual(expected);
    }
    expect((await list('enabled=false')).webhooks.every((w) => !w.enabled)).toBe(true);
  });

  it('refuses an unknown event type or a non-boolean enabled with 400 naming the parameter', async () => {
    const bad = async (query: string) => expectError(await call(t.app, 'GET', `/webhooks?${query}`, { auth: a.auth }), 400, 'VALIDATION_FAILED');
    expect(await bad('eventType=lead.exploded')).toEqual([{ field: 'eventType', code: 'invalid_value', message: expect.stringContaining('must be one of: lead.created, lead.updated') }]);
    expect((await bad('eventType=*')).map((e) => e.field)).toEqual(['eventType']);
    expect((await bad('enabled=maybe')).map((e) => [e.field, e.code])).toEqual([['enabled', 'invalid_type']]);
    expect((await bad('enabled=true&enabled=false')).map((e) => e.field)).toEqual(['enabled']);
    expect((await bad('eventTypes=lead.created')).map((e) => [e.field, e.code])).toEqual([['eventTypes', 'unknown_field']]);
  });
});

describe('PATCH /webhooks/{id}', () => {
  it('changes only the fields sent; disabling flags it, enabling clears the flag', async () => {
    const webhook = await hook(a, { description: 'before' });
    const res = await call(t.app, 'PATCH', `/webhooks/${webhook.id}`, { auth: a.auth, body: { events: ['*'], url: 'http://127.0.0.1:9/new' } });
    expect(res.status).toBe(200);
    expect(res.body.data.webhook).toMatchObject({ events: ['*'], url: 'http://127.0.0.1:9/new', description: 'before', enabled: true });
    expect(res.body.data.webhook).not.toHaveProperty('secret');
    const off = await call(t.app, 'PATCH', `/webhooks/${webhook.id}`, { auth: a.auth, body: { enabled: false } });
    expect(off.body.data.webhook).toMatchObject({ enabled: false, disabledReason: 'DISABLED_BY_USER' });
    const on = await call(t.app, 'PATCH', `/webhooks/${webhook.id}`, { auth: a.auth, body: { enabled: true, description: null } });
    expect(on.body.data.webhook).toMatchObject({ enabled: true, disabledReason: null, failingSince: null, description: null });
  });

  it('refuses an empty or unknown patch', async () => {
    const webhook = await hook(a);
    expectError(await call(t.app, 'PATCH', `/webhooks/${webhook.id}`, { auth: a.auth, body: {} }), 400, 'VALIDATION_FAILED');
    const errors = expectError(await call(t.app, 'PATCH', `/webhooks/${webhook.id}`, { auth: a.auth, body: { secret: 'whsec_x' } }), 400, 'VALIDATION_FAILED');
    expect(errors[0]).toMatchObject({ field: 'secret', code: 'unknown_field' });
  });
});

describe('POST /webhooks/{id}/rotate-secret', () => {
  it('returns a new secret once and keeps the previous one valid for 24 h', async () => {
    const webhook = await hook(a);
    const res = await call(t.app, 'POST', `/webhooks/${webhook.id}/rotate-secret`, { auth: a.auth });
    expect(res.status).toBe(200);
    const rotated = res.body.data.webhook;
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(webhook.secret);
    const window = new Date(rotated.previousSecretExpiresAt).getTime() - new Date(rotated.updatedAt).getTime();
    expect(window).toBe(24 * 60 * 60 * 1000);
    const read = await call(t.app, 'GET', `/webhooks/${webhook.id}`, { auth: a.auth });
    expect(read.body.data.webhook).not.toHaveProperty('secret');
  });

  it('does not rotate twice for a repeated Idempotency-Key', async () => {
    const webhook = await hook(a);
    const headers = { 'idempotency-key': `rot-${webhook.id}` };
    const first = await call(t.app, 'POST', `/webhooks/${webhook.id}/rotate-secret`, { auth: a.auth, headers });
    const again = await call(t.app, 'POST', `/webhooks/${webhook.id}/rotate-secret`, { auth: a.auth, headers });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.data.webhook.secret).toBe(first.body.data.webhook.secret);
  });
});

describe('POST /webhooks/{id}/test and the delivery log', () => {
  it('queues a webhook.test delivery for this endpoint, listed in its log', async () => {
    const webhook = await hook(a);
    const res = await call(t.app, 'POST', `/webhooks/${webhook.id}/test`, { auth: a.auth });
    expect(res.status).toBe(201);
    const delivery = res.body.data.delivery;
    expect(delivery).toMatchObject({ webhookId: webhook.id, eventType: 'webhook.test', status: 'PENDING', attempt: 0, attempts: [], error: null, responseStatus: null });
    expect(delivery.eventId).toMatch(/^evt_[0-9a-f]{24}$/);
    expect(delivery.nextAttemptAt).toEqual(expect.any(String));
    const log = await call(t.app, 'GET', `/webhooks/${webhook.id}/deliveries`, { auth: a.auth });
    expect(log.status).toBe(200);
    expect(log.body.data.deliveries).toEqual([delivery]);
    expect(log.body.data.pagination).toMatchObject({ total: 1, page: 1 });
    const filtered = await call(t.app, 'GET', `/webhooks/${webhook.id}/deliveries?status=SUCCEEDED`, { auth: a.auth });
    expect(filtered.body.data.deliveries).toEqual([]);
    const byEvent = await call(t.app, 'GET', `/webhooks/${webhook.id}/deliveries?eventId=${delivery.eventId}`, { auth: a.auth });
    expect(byEvent.body.data.deliveries).toHaveLength(1);
  });

  it('refuses to test a disabled endpoint', async () => {
    const webhook = await hook(a, { enabled: false });
    expectError(await call(t.app, 'POST', `/webhooks/${webhook.id}/test`, { auth: a.auth }), 409, 'CONFLICT');
  });

  it('re-queues a delivery; 409 while an attempt is in flight or the endpoint is disabled', async () => {
    const webhook = await hook(a);
    const delivery = (await call(t.app, 'POST', `/webhooks/${webhook.id}/test`, { auth: a.auth })).body.data.delivery;
    const retry = await call(t.app, 'POST', `/webhooks/${webhook.id}/deliveries/${delivery.id}/retry`, { auth: a.auth });
    expect(retry.status).toBe(200);
    expect(retry.body.data.delivery).toMatchObject({ id: delivery.id, eventId: delivery.eventId, status: 'PENDING' });
    await t.ctx.database.db.updateTable('webhook_deliveries').set({ status: 'SENDING' }).where('id', '=', delivery.id).execute();
    expectError(await call(t.app, 'POST', `/webhooks/${webhook.id}/deliveries/${delivery.id}/retry`, { auth: a.auth }), 409, 'CONFLICT');
    await t.ctx.database.db.updateTable('webhook_deliveries').set({ status: 'FAILED', due_at: null }).where('id', '=', delivery.id).execute();
    await call(t.app, 'PATCH', `/webhooks/${webhook.id}`, { auth: a.auth, body: { enabled: false } });
    expectError(await call(t.app, 'POST', `/webhooks/${webhook.id}/deliveries/${delivery.id}/retry`, { auth: a.auth }), 409, 'CONFLICT');
  });

  it('404s a delivery of another endpoint', async () => {
    const one = await hook(a);
    const other = await hook(a);
    const delivery = (await call(t.app, 'POST', `/webhooks/${one.id}/test`, { auth: a.auth })).body.data.delivery;
    expectError(await call(t.app, 'POST', `/webhooks/${other.id}/deliveries/${delivery.id}/retry`, { auth: a.auth }), 404, 'NOT_FOUND');
  });

  it('disabling cancels queued deliveries', async () => {
    const webhook = await hook(a);
    const delivery = (await call(t.app, 'POST', `/webhooks/${webhook.id}/test`, { auth: a.auth })).body.data.delivery;
    await call(t.app, 'PATCH', `/webhooks/${webhook.id}`, { auth: a.auth, body: { enabled: false } });
    const log = await call(t.app, 'GET', `/webhooks/${webhook.id}/deliveries`, { auth: a.auth });
    expect(log.body.data.deliveries[0]).toMatchObject({ id: delivery.id, status: 'FAILED', nextAttemptAt: null, error: 'Endpoint disabled by a user' });
  });
});

describe('DELETE /webhooks/{id}', () => {
  it('deletes the endpoint and its delivery log', async () => {
    const webhook = await hook(a);
    await call(t.app, 'POST', `/webhooks/${webhook.id}/test`, { auth: a.auth });
    const res = await call(t.app, 'DELETE', `/webhooks/${webhook.id}`, { auth: a.auth });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ webhook: { id: webhook.id, deleted: true } });
    expectError(await call(t.app, 'GET', `/webhooks/${webhook.id}`, { auth: a.auth }), 404, 'NOT_FOUND');
    expectError(await call(t.app, 'DELETE', `/webhooks/${webhook.id}`, { auth: a.auth }), 404, 'NOT_FOUND');
    const rows = await t.ctx.database.db.selectFrom('webhook_deliveries').select('id').where('endpoint_id', '=', webhook.id).execute();
    expect(rows).toEqual([]);
  });
});

describe('every webhook route: scopes and organizations', () => {
  const routes = (id: string, deliveryId: string) =>
    [
      ['GET', '/webhooks', 'webhooks:read', undefined],
      ['POST', '/webhooks', 'webhooks:write', { url: 'http://127.0.0.1:9/x', events: ['*'] }],
      ['GET', `/webhooks/${id}`, 'webhooks:read', undefined],
      ['PATCH', `/webhooks/${id}`, 'webhooks:write', { description: 'x' }],
      ['DELETE', `/webhooks/${id}`, 'webhooks:write', undefined],
      ['POST', `/webhooks/${id}/rotate-secret`, 'webhooks:write', undefined],
      ['POST', `/webhooks/${id}/test`, 'webhooks:write', undefined],
      ['GET', `/webhooks/${id}/deliveries`, 'webhooks:read', undefined],
      ['POST', `/webhooks/${id}/deliveries/${deliveryId}/retry`, 'webhooks:write', undefined],
    ] as const;

  it('403 without the scope (write does not imply read, read does not allow writes)', async () => {
    const webhook = await hook(a);
    const delivery = (await call(t.app, 'POST', `/webhooks/${webhook.id}/test`, { auth: a.auth })).body.data.delivery;
    const readOnly = await addKey(t.ctx, a.orgId, ['webhooks:read', 'leads:write']);
    const writeOnly = await addKey(t.ctx, a.orgId, ['webhooks:write', 'leads:read']);
    for (const [method, path, scope, body] of routes(webhook.id, delivery.id)) {
      const key = scope === 'webhooks:read' ? writeOnly : readOnly;
      const res = await call(t.app, method, path, { auth: key.auth, ...(body ? { body } : {}) });
      expectError(res, 403, 'INSUFFICIENT_SCOPE');
      expect(res.body.message).toContain(scope);
      expectError(await call(t.app, method, path, { ...(body ? { body } : {}) }), 401, 'UNAUTHORIZED');
    }
  });

  it('404 for another organization’s endpoint and delivery, which stay untouched', async () => {
    const webhook = await hook(a);
    const delivery = (await call(t.app, 'POST', `/webhooks/${webhook.id}/test`, { auth: a.auth })).body.data.delivery;
    for (const [method, path, , body] of routes(webhook.id, delivery.id).filter(([, path]) => path !== '/webhooks')) {
      expectError(await call(t.app, method, path, { auth: b.auth, ...(body ? { body } : {}) }), 404, 'NOT_FOUND');
    }
    const still = await call(t.app, 'GET', `/webhooks/${webhook.id}`, { auth: a.auth });
    expect(still.body.data.webhook).toMatchObject({ id: webhook.id, description: null, previousSecretExpiresAt: null });
    const list = await call(t.app, 'GET', '/webhooks?limit=100', { auth: b.auth });
    expect(list.body.data.webhooks.map((w: { id: string }) => w.id)).not.toContain(webhook.id);
  });
});

describe('secrets never reach the logs', () => {
  it('logs nothing of the secret while creating, rotating and failing', async () => {
    let logs = '';
    const stream = new Writable({ write(chunk, _enc, done) { logs += chunk.toString(); done(); } });
    const app = await buildAppWithSharedSchemas({ ...t.ctx, config: { ...t.config, logLevel: 'trace' } }, { logger: { stream } });
    await app.ready();
    const created = await call(app, 'POST', '/webhooks', { auth: a.auth, body: { url: 'http://127.0.0.1:9/log', events: ['*'] } });
    const rotated = await call(app, 'POST', `/webhooks/${created.body.data.webhook.id}/rotate-secret`, { auth: a.auth });
    await call(app, 'PATCH', `/webhooks/${created.body.data.webhook.id}`, { auth: a.auth, body: { secret: rotated.body.data.webhook.secret } });
    await app.close();
    expect(logs.length).toBeGreaterThan(0);
    for (const secret of [created.body.data.webhook.secret, rotated.body.data.webhook.secret]) {
      expect(logs).not.toContain(secret.slice(6, 30));
    }
  });
});

describe('OpenAPI', () => {
  it('documents every webhook route under the Webhooks tag', async () => {
    const doc = (await call(t.app, 'GET', '/api/public/v1/openapi.json')).body;
    for (const path of ['/api/public/v1/webhooks', '/api/public/v1/webhooks/{id}', '/api/public/v1/webhooks/{id}/rotate-secret', '/api/public/v1/webhooks/{id}/test', '/api/public/v1/webhooks/{id}/deliveries', '/api/public/v1/webhooks/{id}/deliveries/{deliveryId}/retry']) {
      expect(doc.paths[path], path).toBeDefined();
    }
    expect(doc.paths['/api/public/v1/webhooks'].post.tags).toEqual(['Webhooks']);
  });
});
