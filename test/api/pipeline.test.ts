import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, dialect, type TestApp } from '../helpers/test-app.js';
import { openDatabase } from '../../src/db/database.js';
import { addKey, seedOrg, type Seeded } from '../helpers/seed.js';
import { API, call, expectError } from '../helpers/http.js';
import { ManualClock } from '../../src/lib/clock.js';
import { revokeApiKey } from '../../src/modules/orgs/orgs.service.js';
import { listKeys, revokeKey } from '../../src/modules/orgs/keys.store.js';

let t: TestApp;
let a: Seeded;
const clock = new ManualClock('2026-11-21T10:00:00.000Z');

beforeAll(async () => {
  t = await buildTestApp({
    clock,
    env: { BODY_LIMIT_BYTES: '4096' },
    beforeReady: (app) => {
      app.get(`${API}/boom`, { config: { auth: { anyOf: [] } } }, async () => {
        throw new Error('SELECT secret FROM users -- internal detail');
      });
    },
  });
  a = await seedOrg(t.ctx);
});
afterAll(() => t.close());

describe('authentication', () => {
  it('answers 401 with WWW-Authenticate for a missing, malformed, unknown, revoked or expired key', async () => {
    const expired = await addKey(t.ctx, a.orgId, ['leads:read'], { expiresAt: '2026-11-21T11:00:00.000Z' });
    const revoked = await addKey(t.ctx, a.orgId, ['leads:read']);
    await revokeApiKey(t.ctx, revoked.keyId);
    const cases: Record<string, string>[] = [
      {},
      { authorization: 'Basic abc' },
      { authorization: 'Bearer' },
      { authorization: 'Bearer crm_live_notreal' },
      { authorization: `Bearer ${a.key}x` },
      { authorization: `Bearer crm_live_${'A'.repeat(32)}` },
      revoked.auth,
    ];
    for (const headers of cases) {
      const res = await call(t.app, 'GET', '/leads', { headers });
      expectError(res, 401, 'UNAUTHORIZED');
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    }
    expect((await call(t.app, 'GET', '/leads', { auth: expired.auth })).status).toBe(200);
    clock.set('2026-11-21T11:00:00.000Z');
    expectError(await call(t.app, 'GET', '/leads', { auth: expired.auth }), 401, 'UNAUTHORIZED');
    clock.set('2026-11-21T10:00:00.000Z');
  });

  it('revocation takes effect on the very next request', async () => {
    const k = await addKey(t.ctx, a.orgId, ['leads:read']);
    expect((await call(t.app, 'GET', '/leads', { auth: k.auth })).status).toBe(200);
    await revokeApiKey(t.ctx, k.keyId);
    expectError(await call(t.app, 'GET', '/leads', { auth: k.auth }), 401, 'UNAUTHORIZED');
  });

  it('revocation by another process (crm key revoke) takes effect on the very next request too', async () => {
    const k = await addKey(t.ctx, a.orgId, ['leads:read']);
    expect((await call(t.app, 'GET', '/leads', { auth: k.auth })).status).toBe(200);
    expect((await call(t.app, 'GET', '/leads', { auth: k.auth })).status).toBe(200);
    // A second connection of its own, as the CLI opens: the server learns of the change only through the database.
    const other = openDatabase({ ...t.config.database, ...(dialect === 'postgres' ? { schema: t.location } : {}) });
    try {
      await revokeKey(other.db, k.keyId, clock.now().toISOString());
    } finally {
      await other.close();
    }
    expectError(await call(t.app, 'GET', '/leads', { auth: k.auth }), 401, 'UNAUTHORIZED');
  });

  it('records when a key was last used', async () => {
    const k = await addKey(t.ctx, a.orgId, ['leads:read']);
    await call(t.app, 'GET', '/leads', { auth: k.auth });
    const stored = (await listKeys(t.ctx.database.db, a.orgId)).find((x) => x.id === k.keyId)!;
    expect(stored.lastUsedAt).toBe(clock.now().toISOString());
  });

  it('answers 403 naming the missing scope; write does not imply read', async () => {
    const writer = await addKey(t.ctx, a.orgId, ['leads:write']);
    const res = await call(t.app, 'GET', '/leads', { auth: writer.auth });
    expectError(res, 403, 'INSUFFICIENT_SCOPE');
    expect(res.body.message).toContain('leads:read');
    const reader = await addKey(t.ctx, a.orgId, ['leads:read']);
    expectError(await call(t.app, 'POST', '/leads', { auth: reader.auth, body: { name: 'x' } }), 403, 'INSUFFICIENT_SCOPE');
  });

  it('GET /me describes the key, organization, user and rate limit', async () => {
    const res = await call(t.app, 'GET', '/me', { auth: a.auth });
    expect(res.status).toBe(200);
    expect(res.body.data.me).toMatchObject({
      organization: { id: a.orgId, timezone: 'UTC' },
      key: { id: a.keyId, name: 'test', prefix: a.key.slice(0, 17), expiresAt: null },
      user: { id: a.userId },
      rateLimit: { limit: 120, windowSeconds: 60 },
    });
    expect(JSON.stringify(res.body)).not.toContain(a.key);
  });
});

describe('error envelope for every outcome', () => {
  it('unknown route → 404 ROUTE_NOT_FOUND, with or without a key', async () => {
    expectError(await call(t.app, 'GET', '/nothing-here'), 404, 'ROUTE_NOT_FOUND');
    expectError(await call(t.app, 'GET', `${API}/nothing`, { auth: a.auth }), 404, 'ROUTE_NOT_FOUND');
    expectError(await call(t.app, 'DELETE', '/leads', { auth: a.auth }), 404, 'ROUTE_NOT_FOUND');
  });

  it('malformed JSON → 400 INVALID_JSON; prototype pollution keys refused', async () => {
    expectError(await call(t.app, 'POST', '/leads', { auth: a.auth, body: '{"name": "x",' }), 400, 'INVALID_JSON');
    expectError(await call(t.app, 'POST', '/leads', { auth: a.auth, body: '{"name":"x","__proto__":{"admin":true}}' }), 400, 'INVALID_JSON');
    expectError(await call(t.app, 'POST', '/leads', { auth: a.auth, body: '{"name":"x","constructor":{"prototype":{"a":1}}}' }), 400, 'INVALID_JSON');
    expectError(await call(t.app, 'POST', '/leads', { auth: a.auth, body: '[]' }), 400, 'VALIDATION_FAILED');
    expectError(await call(t.app, 'POST', '/leads', { auth: a.auth, body: '"x"' }), 400, 'VALIDATION_FAILED');
  });

  it('empty body and wrong content type', async () => {
    const empty = await t.app.inject({ method: 'POST', url: `${API}/leads`, headers: { ...a.auth, 'content-type': 'application/json' } });
    expect(JSON.parse(empty.body)).toMatchObject({ status: false, code: 'INVALID_JSON' });
    // A route that takes no body (DELETE, restore) accepts the header many clients always send, with no body.
    const lead = (await call(t.app, 'POST', '/leads', { auth: a.auth, body: { name: 'Header always sent' } })).body.data.lead.id;
    for (const url of [`${API}/leads/${lead}`, `${API}/leads/${lead}/restore`]) {
      const res = await t.app.inject({ method: url.endsWith('restore') ? 'POST' : 'DELETE', url, headers: { ...a.auth, 'content-type': 'application/json' } });
      expect(res.statusCode, res.body).toBe(200);
    }
    const text = await t.app.inject({ method: 'POST', url: `${API}/leads`, headers: { ...a.auth, 'content-type': 'text/plain' }, payload: 'name=x' });
    expect(text.statusCode).toBe(415);
    expect(JSON.parse(text.body)).toMatchObject({ status: false, code: 'UNSUPPORTED_MEDIA_TYPE' });
    const form = await t.app.inject({ method: 'POST', url: `${API}/leads`, headers: { ...a.auth, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'name=x' });
    expect(form.statusCode).toBe(415);
    const none = await t.app.inject({ method: 'POST', url: `${API}/leads`, headers: a.auth });
    expect(JSON.parse(none.body)).toMatchObject({ status: false, code: 'VALIDATION_FAILED' });
  });

  it('a compressed body or a charset other than UTF-8 → 415 UNSUPPORTED_MEDIA_TYPE, naming what to send, and nothing written', async () => {
    const before = (await call(t.app, 'GET', '/leads', { auth: a.auth })).body.data.pagination.total;
    const body = JSON.stringify({ name: 'Zoë Encoded' });
    const cases: [Record<string, string>, string | Buffer, RegExp][] = [
      [{ 'content-encoding': 'gzip' }, gzipSync(body), /uncompressed/],
      [{ 'content-encoding': 'br' }, body, /uncompressed/],
      [{ 'content-type': 'application/json; charset=iso-8859-1' }, Buffer.from(body, 'latin1'), /UTF-8/],
      [{ 'content-type': 'application/json;charset="UTF-16"' }, Buffer.from(body, 'utf16le'), /UTF-8/],
    ];
    for (const [headers, payload, message] of cases) {
      const res = await t.app.inject({ method: 'POST', url: `${API}/leads`, headers: { ...a.auth, 'content-type': 'application/json', ...headers }, payload });
      expect(res.statusCode, JSON.stringify(headers)).toBe(415);
      expect(JSON.parse(res.body)).toMatchObject({ status: false, code: 'UNSUPPORTED_MEDIA_TYPE', message: expect.stringMatching(message) });
    }
    for (const headers of [{ 'content-encoding': 'identity' }, { 'content-type': 'application/json; charset=UTF-8' }, { 'content-type': 'application/json; charset=utf8' }]) {
      const res = await t.app.inject({ method: 'POST', url: `${API}/leads`, headers: { ...a.auth, 'content-type': 'application/json', ...headers }, payload: body });
      expect(res.statusCode, JSON.stringify(headers)).toBe(201);
    }
    expect((await call(t.app, 'GET', '/leads', { auth: a.auth })).body.data.pagination.total).toBe(before + 3);
  });

  it('oversized body → 413 PAYLOAD_TOO_LARGE and nothing written', async () => {
    const before = (await call(t.app, 'GET', '/leads', { auth: a.auth })).body.data.pagination.total;
    expectError(await call(t.app, 'POST', '/leads', { auth: a.auth, body: { name: 'big', notes: 'x'.repeat(5000) } }), 413, 'PAYLOAD_TOO_LARGE');
    expect((await call(t.app, 'GET', '/leads', { auth: a.auth })).body.data.pagination.total).toBe(before);
  });

  it('unexpected exception → 500 INTERNAL_ERROR without internals', async () => {
    const res = await call(t.app, 'GET', `${API}/boom`, { auth: a.auth });
    expectError(res, 500, 'INTERNAL_ERROR');
    expect(res.body.message).not.toMatch(/SELECT|secret|stack|Error:/);
    expect(Object.keys(res.body).sort()).toEqual(['code', 'message', 'requestId', 'status']);
  });

  it('every response carries X-Request-Id; a safe incoming one is echoed', async () => {
    const ok = await call(t.app, 'GET', '/leads', { auth: a.auth, headers: { 'x-request-id': 'trace-123' } });
    expect(ok.headers['x-request-id']).toBe('trace-123');
    const unsafe = await call(t.app, 'GET', '/leads', { auth: a.auth, headers: { 'x-request-id': 'bad id <script>' } });
    expect(unsafe.headers['x-request-id']).toMatch(/^req_[0-9a-z]+$/);
    for (const res of [await call(t.app, 'GET', '/nope'), await call(t.app, 'GET', '/health'), await call(t.app, 'GET', '/leads')]) {
      expect(res.headers['x-request-id']).toBeTruthy();
    }
  });
});

describe('rate limit', () => {
  it('sends IETF and X-RateLimit headers, then 429 with Retry-After, and resets after the window', async () => {
    const o = await seedOrg(t.ctx, { rateLimitPerMinute: 5 });
    const answers = [];
    for (let i = 0; i < 7; i++) answers.push(await call(t.app, 'GET', '/leads', { auth: o.auth }));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 429, 429]);
    expect(answers[0]!.headers['ratelimit-policy']).toBe('"default";q=5;w=60');
    expect(answers[0]!.headers.ratelimit).toBe('"default";r=4;t=60');
    expect(answers[0]!.headers['x-ratelimit-limit']).toBe('5');
    expect(answers[4]!.headers['x-ratelimit-remaining']).toBe('0');
    const limited = answers[5]!;
    expectError(limited, 429, 'RATE_LIMITED');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    clock.advance(60_000);
    expect((await call(t.app, 'GET', '/leads', { auth: o.auth })).status).toBe(200);
  });

  it('counts per key: another key of the same organization has its own budget', async () => {
    const o = await seedOrg(t.ctx, { rateLimitPerMinute: 2 });
    const other = await addKey(t.ctx, o.orgId, ['leads:read'], { rateLimitPerMinute: 2 });
    await call(t.app, 'GET', '/leads', { auth: o.auth });
    await call(t.app, 'GET', '/leads', { auth: o.auth });
    expect((await call(t.app, 'GET', '/leads', { auth: o.auth })).status).toBe(429);
    expect((await call(t.app, 'GET', '/leads', { auth: other.auth })).status).toBe(200);
  });

  it('charges forbidden calls too: a key without the scope spends its budget on 403s, then gets 429', async () => {
    const o = await seedOrg(t.ctx, { scopes: ['accounts:read'], rateLimitPerMinute: 3 });
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await call(t.app, 'POST', '/leads', { auth: o.auth, body: { name: 'Forbidden' } }));
    expect(answers.map((r) => r.status)).toEqual([403, 403, 403, 429, 429]);
    expect(answers.map((r) => r.headers['x-ratelimit-remaining'])).toEqual(['2', '1', '0', '0', '0']);
    expectError(answers[3]!, 429, 'RATE_LIMITED');
    expect((await call(t.app, 'GET', '/accounts', { auth: o.auth })).status).toBe(429);
  });

  it('charges a call with a key to a route that does not exist, and refuses a bad key there', async () => {
    const o = await seedOrg(t.ctx, { rateLimitPerMinute: 2 });
    const answers = [];
    for (const path of [`${API}/nothing`, `${API}/leads/abcdefabcdefabcdefabcdef/nothing`, `${API}/nothing`]) {
      answers.push(await call(t.app, 'GET', path, { auth: o.auth }));
    }
    expect(answers.map((r) => r.status)).toEqual([404, 404, 429]);
    expect(answers.map((r) => r.headers['x-ratelimit-remaining'])).toEqual(['1', '0', '0']);
    expectError(await call(t.app, 'GET', `${API}/nothing`, { auth: { authorization: 'Bearer crm_nope' } }), 401, 'UNAUTHORIZED');
    const anonymous = await call(t.app, 'GET', `${API}/nothing`);
    expectError(anonymous, 404, 'ROUTE_NOT_FOUND');
    expect(anonymous.headers['x-ratelimit-remaining']).toBeUndefined();
  });

  it('puts the rate-limit headers on every authenticated answer: 404, 400, 415, the OpenAPI document, MCP', async () => {
    const o = await seedOrg(t.ctx, { rateLimitPerMinute: 50 });
    const answers = {
      notFound: await call(t.app, 'GET', '/leads/abcdefabcdefabcdefabcdef', { auth: o.auth }),
      invalid: await call(t.app, 'POST', '/leads', { auth: o.auth, body: { name: '' } }),
      badJson: await call(t.app, 'POST', '/leads', { auth: o.auth, body: '{"name":' }),
      mediaType: await call(t.app, 'POST', '/leads', { auth: o.auth, body: 'name=x', headers: { 'content-type': 'text/plain' } }),
      openApi: await call(t.app, 'GET', `${API}/openapi.json`, { auth: o.auth }),
      mcp: await call(t.app, 'POST', '/mcp', { auth: o.auth, headers: { accept: 'application/json, text/event-stream' }, body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } }),
    };
    expect(Object.values(answers).map((r) => r.status)).toEqual([404, 400, 400, 415, 200, 200]);
    const remaining = Object.entries(answers).map(([name, r]) => [name, r.headers['ratelimit-policy'], r.headers['x-ratelimit-remaining']]);
    expect(remaining).toEqual(Object.keys(answers).map((name, i) => [name, '"default";q=50;w=60', String(49 - i)]));
    expect((await call(t.app, 'GET', `${API}/openapi.json`)).headers['ratelimit-policy']).toBeUndefined();
  });

  it('uses RATE_LIMIT_PER_MINUTE by default', async () => {
    const res = await call(t.app, 'GET', '/leads', { auth: a.auth });
    expect(res.headers['x-ratelimit-limit']).toBe('120');
  });
});

describe('health and documents', () => {
  it('GET /health and /ready need no key', async () => {
    expect((await call(t.app, 'GET', '/health')).body).toMatchObject({ status: true, data: { status: 'ok' } });
    expect((await call(t.app, 'GET', '/ready')).body).toMatchObject({ status: true, data: { status: 'ready' } });
  });

  it('GET /docs renders the API reference without a key', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('swagger');
    expect(res.body).not.toMatch(/https?:\/\/(?!127\.0\.0\.1)[a-z]/i);
  });
});
