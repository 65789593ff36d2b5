import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { createClient, CrmApiError, CrmConnectionError } from '../src/index.js';
import { apiError, lead, ok, page, scriptedFetch } from './fake-fetch.js';

const KEY = 'crm_live_test';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function client(answers: Parameters<typeof scriptedFetch>[0], opts: { maxRetries?: number } = {}) {
  const fake = scriptedFetch(answers);
  return { crm: createClient({ baseUrl: 'https://crm.example.com/', apiKey: KEY, fetch: fake.fetch, userAgent: 'acme-sync/2.0', ...opts }), seen: fake.seen };
}

/** Runs a call while letting fake timers fire, so retry waits take no real time. */
async function settle<T>(promise: Promise<T>): Promise<T> {
  const result = promise.then((value) => ({ value }), (error: unknown) => ({ error }));
  await vi.runAllTimersAsync();
  const outcome = await result;
  if ('error' in outcome) throw outcome.error;
  return outcome.value;
}

beforeEach(() => {
  vi.useFakeTimers({ now: new Date('2026-11-21T10:00:00Z') });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('requests', () => {
  it('sends the key, JSON headers and a User-Agent naming the SDK and the integration, and unwraps data', async () => {
    const { crm, seen } = client([ok({ lead: lead('a1') })]);
    await expect(crm.leads.get('a1')).resolves.toEqual(lead('a1'));
    expect(seen[0]).toMatchObject({ url: 'https://crm.example.com/api/public/v1/leads/a1', method: 'GET' });
    expect(seen[0]!.headers).toMatchObject({ authorization: `Bearer ${KEY}`, accept: 'application/json' });
    expect(seen[0]!.headers['user-agent']).toMatch(/^crm-sdk\/\d+\.\d+\.\d+ acme-sync\/2\.0$/);
    expect(seen[0]!.headers['idempotency-key']).toBeUndefined();
  });

  it('accepts a baseUrl that already ends with the API prefix and encodes path parameters', async () => {
    const fake = scriptedFetch([ok({ lead: lead('x') })]);
    const crm = createClient({ baseUrl: 'http://h:3000/api/public/v1', apiKey: KEY, fetch: fake.fetch });
    await crm.leads.get('a/b?c');
    expect(fake.seen[0]!.url).toBe('http://h:3000/api/public/v1/leads/a%2Fb%3Fc');
  });

  it('sends query parameters of a list and skips the undefined ones', async () => {
    const { crm, seen } = client([page(['a'], 2, null)]);
    const result = await crm.leads.list({ q: 'ada@example.com', page: 2, limit: undefined });
    expect(result.leads).toEqual([lead('a')]);
    expect(seen[0]!.url).toBe('https://crm.example.com/api/public/v1/leads?q=ada%40example.com&page=2');
  });

  it('gives every create a random Idempotency-Key, unless one is given', async () => {
    const { crm, seen } = client([ok({ lead: lead('a') }, 201), ok({ lead: lead('b') }, 201), ok({ lead: lead('c') }, 201)]);
    await crm.leads.create({ name: 'A' });
    await crm.leads.create({ name: 'B' });
    await crm.leads.create({ name: 'C' }, { idempotencyKey: 'form-42' });
    expect(seen.map((s) => s.body)).toEqual([{ name: 'A' }, { name: 'B' }, { name: 'C' }]);
    expect(seen[0]!.headers['idempotency-key']).toMatch(UUID);
    expect(seen[1]!.headers['idempotency-key']).toMatch(UUID);
    expect(seen[1]!.headers['idempotency-key']).not.toBe(seen[0]!.headers['idempotency-key']);
    expect(seen[2]!.headers['idempotency-key']).toBe('form-42');
    expect(seen[0]!.headers['content-type']).toBe('application/json');
  });

  it('sends an Idempotency-Key without a body on the POSTs the server makes idempotent (secret rotation)', async () => {
    const { crm, seen } = client([apiError(503, 'SERVICE_UNAVAILABLE'), ok({ webhook: { id: 'w1', secret: 'whsec_x' } })]);
    await settle(crm.webhooks.rotateSecret('w1'));
    expect(seen.map((s) => [s.method, s.url, s.body])).toEqual([
      ['POST', 'https://crm.example.com/api/public/v1/webhooks/w1/rotate-secret', undefined],
      ['POST', 'https://crm.example.com/api/public/v1/webhooks/w1/rotate-secret', undefined],
    ]);
    expect(seen[0]!.headers['idempotency-key']).toMatch(UUID);
    expect(seen[1]!.headers['idempotency-key']).toBe(seen[0]!.headers['idempotency-key']);
    expect(seen[0]!.headers['content-type']).toBeUndefined();
  });
});

describe('errors', () => {
  it('throws CrmApiError with status, code, message, field errors and request id', async () => {
    const errors = [{ field: 'email', code: 'invalid_format', message: 'must be a valid e-mail address' }];
    const { crm } = client([apiError(400, 'VALIDATION_FAILED', { errors })]);
    const error = await crm.leads.create({ name: 'A', email: 'nope' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CrmApiError);
    expect(error).toMatchObject({ status: 400, code: 'VALIDATION_FAILED', message: 'VALIDATION_FAILED happened', errors, requestId: 'req-1' });
  });

  it('maps an answer that is not the API envelope (a proxy page) to HTTP_ERROR with the request id header', async () => {
    const { crm } = client([{ status: 404, body: '<html>nope</html>', headers: { 'x-request-id': 'edge-9' } }]);
    await expect(crm.leads.get('a')).rejects.toMatchObject({ status: 404, code: 'HTTP_ERROR', requestId: 'edge-9', errors: [] });
  });

  it('maps a 2xx answer that is not the API envelope (a captive portal) to HTTP_ERROR, not a SyntaxError', async () => {
    const { crm } = client([{ status: 200, body: '<html>sign in to the Wi-Fi</html>', headers: { 'x-request-id': 'edge-7' } }]);
    await expect(crm.leads.get('a')).rejects.toMatchObject({ status: 200, code: 'HTTP_ERROR', requestId: 'edge-7' });
  });

  it('does not retry client errors', async () => {
    const { crm, seen } = client([apiError(404, 'NOT_FOUND'), ok({})]);
    await expect(settle(crm.leads.get('a'))).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect(seen).toHaveLength(1);
  });
});

describe('retries', () => {
  it('waits for Retry-After on 429, then retries (any method: the server refused before reading the body)', async () => {
    const { crm, seen } = client([apiError(429, 'RATE_LIMITED', {}, { 'retry-after': '7' }), ok({ leads: [], pagination: { page: 1, limit: 25, total: 0, totalPages: 0, hasMore: false } })]);
    await settle(crm.leads.list());
    expect(seen).toHaveLength(2);
    expect(seen[1]!.at - seen[0]!.at).toBeGreaterThanOrEqual(7000);
    expect(seen[1]!.at - seen[0]!.at).toBeLessThan(8000);
  });

  it('gives up with the 429 when Retry-After is longer than a minute', async () => {
    const { crm, seen } = client([apiError(429, 'RATE_LIMITED', {}, { 'retry-after': '3600' })]);
    await expect(settle(crm.leads.get('a'))).rejects.toMatchObject({ status: 429, retryAfter: 3600 });
    expect(seen).toHaveLength(1);
  });

  it('retries a GET on 5xx and on network errors with growing, jittered delays, then succeeds', async () => {
    const { crm, seen } = client([apiError(503, 'SERVICE_UNAVAILABLE'), new TypeError('fetch failed'), ok({ lead: lead('a') })]);
    await expect(settle(crm.leads.get('a'))).resolves.toEqual(lead('a'));
    expect(seen).toHaveLength(3);
    const first = seen[1]!.at - seen[0]!.at;
    const second = seen[2]!.at - seen[1]!.at;
    expect(first).toBeGreaterThanOrEqual(250);
    expect(first).toBeLessThanOrEqual(500);
    expect(second).toBeGreaterThanOrEqual(500);
    expect(second).toBeLessThanOrEqual(1000);
  });

  it('stops after maxRetries and throws the last failure', async () => {
    const { crm, seen } = client([new TypeError('fetch failed'), new TypeError('fetch failed'), new TypeError('fetch failed')], { maxRetries: 1 });
    const error = await settle(crm.leads.get('a')).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CrmConnectionError);
    expect((error as Error).message).toContain('fetch failed');
    expect(seen).toHaveLength(2);
  });

  it('retries a create with the SAME Idempotency-Key, so the server replays instead of creating twice', async () => {
    const { crm, seen } = client([new TypeError('socket hang up'), apiError(500, 'INTERNAL_ERROR'), apiError(409, 'IDEMPOTENCY_KEY_IN_USE'), ok({ lead: lead('a') }, 201)], { maxRetries: 3 });
    await expect(settle(crm.leads.create({ name: 'A' }))).resolves.toEqual(lead('a'));
    expect(seen).toHaveLength(4);
    expect(new Set(seen.map((s) => s.headers['idempotency-key'])).size).toBe(1);
  });

  it('retries a PATCH on network errors (every PATCH of this API is an absolute merge-patch)', async () => {
    const { crm, seen } = client([new TypeError('fetch failed'), ok({ lead: lead('a') })]);
    await settle(crm.leads.update('a', { status: 'CONTACTED' }));
    expect(seen.map((s) => s.method)).toEqual(['PATCH', 'PATCH']);
  });

  it('never retries on 5xx or network errors a POST sent without an Idempotency-Key', async () => {
    const { Core } = await import('../src/core.js');
    const fake = scriptedFetch([apiError(502, 'INTERNAL_ERROR'), ok({ lead: lead('a') })]);
    const core = new Core({ baseUrl: 'https://crm.example.com', apiKey: KEY, fetch: fake.fetch });
    await expect(settle(core.call('/api/public/v1/leads', 'post', { body: { name: 'A' } }))).rejects.toMatchObject({ status: 502 });
    expect(fake.seen).toHaveLength(1);
  });

  it('maxRetries: 0 on a call disables retries for it', async () => {
    const { crm, seen } = client([apiError(429, 'RATE_LIMITED', {}, { 'retry-after': '1' }), ok({ lead: lead('a') })]);
    await expect(settle(crm.leads.get('a', { maxRetries: 0 }))).rejects.toMatchObject({ status: 429 });
    expect(seen).toHaveLength(1);
  });

  it("stops waiting at once when the caller's signal aborts", async () => {
    const { crm, seen } = client([apiError(503, 'SERVICE_UNAVAILABLE', {}, { 'retry-after': '30' }), ok({ lead: lead('a') })]);
    const controller = new AbortController();
    const call = crm.leads.get('a', { signal: controller.signal }).catch((e: unknown) => e);
    await vi.advanceTimersByTimeAsync(1000);
    controller.abort(new Error('user cancelled'));
    expect(await call).toMatchObject({ message: 'user cancelled' });
    expect(seen).toHaveLength(1);
  });
});

describe('pagination', () => {
  it('iterates every item of every page, following nextCursor as after until it is null', async () => {
    const { crm, seen } = client([page(['e', 'd'], 1, 'c1'), page(['c', 'b'], 1, 'c2'), page(['a'], 1, null)]);
    const ids: string[] = [];
    for await (const l of crm.leads.iterate({ q: 'ada', limit: 2 })) ids.push(l.id);
    expect(ids).toEqual(['e', 'd', 'c', 'b', 'a']);
    expect(seen.map((s) => new URL(s.url).search)).toEqual(['?q=ada&limit=2', '?q=ada&limit=2&after=c1', '?q=ada&limit=2&after=c2']);
  });

  it('starts at the page asked for, then switches to cursors (no page number is sent again)', async () => {
    const { crm, seen } = client([page(['c'], 3, 'c4'), page(['b'], 1, null)]);
    const pages = [];
    for await (const p of crm.leads.pages({ page: 3 })) pages.push(p.leads.map((l) => l.id));
    expect(pages).toEqual([['c'], ['b']]);
    expect(seen.map((s) => new URL(s.url).search)).toEqual(['?page=3', '?after=c4']);
  });
});
