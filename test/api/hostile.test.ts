import fc from 'fast-check';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../../src/errors.js';
import { BATCH_BODY_LIMIT_FACTOR } from '../../src/modules/shared/batch.routes.js';
import { buildTestApp, dialect, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { fingerprinter } from '../helpers/db-fingerprint.js';
import { operationsOf, paramPrefixes, type Operation, type OpenApiDocument, type Parameter } from '../helpers/openapi.js';
import { hostileString, mutatedValue, PROTOTYPE_KEYS, UNICODE_EDGES, validValue, wrongType } from '../helpers/hostile-values.js';

/**
 * Requests generated from the app's own OpenAPI document, every operation, mostly malformed on purpose.
 * Whatever arrives: never a 5xx, every error in the envelope with the status its code maps to, and a
 * rejected write leaves the database exactly as it was. At least MIN_REQUESTS requests per run of the file:
 * 10,000 on SQLite (the fast loop runs only that), 4,000 more on PostgreSQL in CI, where each request costs
 * network round trips (the same generators; the whole CI run sends over 14,000).
 */
const MIN_REQUESTS = dialect === 'postgres' ? 4_000 : 10_000;
const BODY_LIMIT = 32_768;
const DEEP = 10_000;

let t: TestApp;
let s: Seeded;
let ops: Operation[];
let doc: OpenApiDocument;
let fingerprint: () => Promise<string>;
/** The database's fingerprint after the last write request (reads cannot change it, so it stays valid). */
let lastFingerprint = '';
let sent = 0;
/** How often each answer (status and code) came back: proof the generators reach past the first check. */
const outcomes = new Map<string, number>();
/** Ids and slugs the API returned from successful creates, by the collection path they were created on. */
const created = new Map<string, string[]>();

interface HostileRequest {
  method: Operation['method'];
  url: string;
  headers: Record<string, string | string[]>;
  payload?: string | Buffer;
}

beforeAll(async () => {
  // Private webhook URLs allowed: no DNS lookups of generated host names (the SSRF guard has its own tests).
  t = await buildTestApp({ env: { BODY_LIMIT_BYTES: String(BODY_LIMIT), WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  s = await seedOrg(t.ctx, { rateLimitPerMinute: 1_000_000_000 });
  doc = JSON.parse((await t.app.inject({ method: 'GET', url: '/openapi.json' })).body);
  ops = operationsOf(doc);
  fingerprint = await fingerprinter(t);
  lastFingerprint = await fingerprint();
});
afterAll(() => t?.close());

function remember(op: Operation, body: any): void {
  const resource = Object.values(body?.data ?? {}).find((v): v is Record<string, unknown> => typeof v === 'object' && v !== null && ('id' in v || 'slug' in v));
  if (!resource) return;
  const path = op.path;
  const list = created.get(path) ?? [];
  for (const k of ['id', 'slug']) if (typeof resource[k] === 'string') list.push(resource[k] as string);
  created.set(path, list.slice(-50));
}

/** Sends one request and checks the invariants that hold whatever was sent. */
async function send(app: FastifyInstance, op: Operation | undefined, req: HostileRequest): Promise<LightMyRequestResponse> {
  const isWrite = req.method !== 'GET';
  const res = await app.inject({ method: req.method, url: req.url, headers: req.headers, ...(req.payload !== undefined ? { payload: req.payload } : {}) });
  sent += 1;
  const context = `${req.method} ${req.url.slice(0, 200)} → ${res.statusCode} ${res.body.slice(0, 300)}`;
  expect(res.statusCode, context).toBeLessThan(500);
  const body = JSON.parse(res.body);
  const outcome = `${res.statusCode} ${body.code}`;
  outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
  if (res.statusCode >= 400) {
    expect(body, context).toMatchObject({ status: false, code: expect.any(String), message: expect.any(String), requestId: res.headers['x-request-id'] });
    expect(ERROR_STATUS[body.code as keyof typeof ERROR_STATUS], context).toBe(res.statusCode);
  } else {
    expect(body, context).toMatchObject({ status: true, code: 'SUCCESS' });
    if (op && req.method === 'POST' && res.statusCode === 201) remember(op, body);
  }
  if (isWrite) {
    const after = await fingerprint();
    if (res.statusCode >= 400) expect(after, `half-written: ${context}`).toBe(lastFingerprint);
    lastFingerprint = after;
  }
  expect(({} as Record<string, unknown>).polluted, 'Object.prototype polluted').toBeUndefined();
  return res;
}

/** Percent-encoding; an unpaired surrogate (not encodable as UTF-8) goes out as its CESU-8 bytes, as a sloppy client would. */
const encode = (v: unknown) =>
  (typeof v === 'string' ? v : JSON.stringify(v))
    .split(/(\p{Cs})/u)
    .map((part) => (/^\p{Cs}$/u.test(part) ? '%ED%A0%80' : encodeURIComponent(part)))
    .join('');
/** Percent-escapes that are not valid UTF-8 or not escapes at all. */
const BROKEN_ESCAPES = ['%', '%zz', '%E0%A4', '%ED%A0%80', '%C0%AF', '%FF', '%00', '..%2F..%2F', '%2e%2e'];

function pathValue(op: Operation, p: Parameter): fc.Arbitrary<string> {
  const prefix = paramPrefixes(op.path)[p.name]!;
  const known = () => created.get(prefix) ?? [];
  return fc.oneof(
    { weight: 3, arbitrary: fc.nat().map((i) => known()[i % Math.max(1, known().length)] ?? 'abcdefabcdefabcdefabcdef').map(encode) },
    { weight: 2, arbitrary: fc.stringMatching(/^[0-9a-f]{24}$/) },
    { weight: 2, arbitrary: hostileString(300).map((v) => encode(v.slice(0, 400))) },
    { weight: 1, arbitrary: fc.constantFrom(...BROKEN_ESCAPES) },
    { weight: 1, arbitrary: wrongType.map(encode) },
  );
}

function queryString(op: Operation): fc.Arbitrary<string> {
  const params = op.parameters.filter((p) => p.in === 'query');
  const one = (p: Parameter) =>
    fc.oneof(
      { weight: 3, arbitrary: fc.constant<string[]>([]) },
      { weight: 3, arbitrary: validValue(doc, p.schema).map((v) => [`${p.name}=${encode(v)}`]) },
      { weight: 3, arbitrary: hostileString(2_000).map((v) => [`${p.name}=${encode(v)}`]) },
      { weight: 1, arbitrary: fc.array(fc.string({ maxLength: 5 }), { minLength: 2, maxLength: 3 }).map((vs) => vs.map((v) => `${p.name}=${encode(v)}`)) },
      { weight: 1, arbitrary: fc.constantFrom(...BROKEN_ESCAPES).map((v) => [`${p.name}=${v}`]) },
      { weight: 1, arbitrary: wrongType.map((v) => [`${p.name}=${encode(v)}`]) },
    );
  const unknown = fc.option(fc.tuple(fc.constantFrom(...PROTOTYPE_KEYS, 'x', 'q[]', 'page[size]', 'filter[x]', 'filter[title][between]', 'filter[constructor]'), fc.string({ maxLength: 5 })).map(([k, v]) => `${encode(k)}=${encode(v)}`), { freq: 5 });
  return fc.tuple(fc.tuple(...params.map(one)), unknown).map(([parts, extra]) => {
    const all = [...parts.flat(), ...(extra ? [extra] : [])];
    return all.length ? `?${all.join('&')}` : '';
  });
}

/** The body as bytes on the wire: JSON of a (mutated) value, or something that is not quite JSON at all. */
function payload(op: Operation): fc.Arbitrary<string | Buffer | undefined> {
  if (!op.body) return fc.oneof({ weight: 5, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)) });
  const value = mutatedValue(doc, op.body, BODY_LIMIT);
  const validText = validValue(doc, op.body).map((v) => JSON.stringify(v));
  return fc.oneof(
    { weight: 12, arbitrary: value.map((v) => JSON.stringify(v) ?? 'null') },
    // Prototype pollution: keys spelled out in the JSON text (an object literal would set the prototype instead).
    {
      weight: 2,
      arbitrary: fc.tuple(validText, fc.constantFrom(...PROTOTYPE_KEYS), fc.boolean()).map(([text, key, nested]) => {
        const poison = key === 'constructor' ? '{"prototype":{"polluted":true}}' : '{"polluted":true}';
        const inner = text.length > 2 ? `,${text.slice(1, -1)}` : '';
        return nested ? `{"notes":{"${key}":${poison}}${inner}}` : `{"${key}":${poison}${inner}}`;
      }),
    },
    // Deep nesting, as raw text (no generator could build it as a value without blowing the stack first).
    {
      weight: 1,
      arbitrary: fc.tuple(fc.integer({ min: 1_000, max: DEEP }), fc.constantFrom('array', 'object', 'field')).map(([n, kind]) =>
        kind === 'array' ? '['.repeat(n) + ']'.repeat(n) : kind === 'object' ? `${'{"a":'.repeat(n)}1${'}'.repeat(n)}` : `{"name":"x","notes":${'['.repeat(n)}${']'.repeat(n)}}`,
      ),
    },
    // Bytes that are not UTF-8, inside an otherwise valid body.
    {
      weight: 2,
      arbitrary: fc.tuple(validText, fc.constantFrom([0xff], [0xc0, 0xaf], [0xe0, 0x80], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xfe, 0xfe])).map(([text, bad]) => {
        const at = Math.max(0, text.indexOf('"', 1) + 1);
        return Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from(bad), Buffer.from(text.slice(at))]);
      }),
    },
    { weight: 1, arbitrary: fc.tuple(validText, fc.nat()).map(([text, cut]) => text.slice(0, cut % Math.max(1, text.length))) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)) },
  );
}

const CONTENT_TYPES = ['application/json', 'application/json; charset=utf-8', 'application/JSON', 'application/json; charset=latin1', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/vnd.api+json', ''];

function headers(op: Operation): fc.Arbitrary<Record<string, string | string[]>> {
  const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 300 });
  const auth = fc.oneof(
    { weight: 12, arbitrary: fc.constant(`Bearer ${s.key}`) },
    { weight: 1, arbitrary: fc.constantFrom('', 'Bearer', 'Bearer ', `Basic ${s.key}`, `Bearer ${s.key}x`, `Bearer ${s.key} ${s.key}`, `bearer   ${s.key}  `) },
    { weight: 1, arbitrary: printable },
  );
  const idempotency = op.parameters.some((p) => p.in === 'header' && p.name === 'idempotency-key')
    ? fc.option(fc.oneof(printable, fc.constantFrom('"quoted"', '"unterminated', 'é'), fc.array(printable, { minLength: 2, maxLength: 2 })), { freq: 2 })
    : fc.constant(null);
  return fc.tuple(auth, fc.constantFrom(...CONTENT_TYPES), idempotency, fc.nat(9)).map(([authorization, type, key, ctPick]) => ({
    ...(authorization ? { authorization } : {}),
    // Mostly JSON, sometimes anything else.
    ...(ctPick < 7 ? { 'content-type': 'application/json' } : type ? { 'content-type': type } : {}),
    ...(key !== null ? { 'idempotency-key': key } : {}),
  }));
}

function requestFor(op: Operation): fc.Arbitrary<HostileRequest> {
  const pathParams = op.parameters.filter((p) => p.in === 'path');
  return fc.tuple(fc.tuple(...pathParams.map((p) => pathValue(op, p))), queryString(op), payload(op), headers(op)).map(([values, query, body, hdrs]) => {
    let url = op.path;
    pathParams.forEach((p, i) => (url = url.replace(`{${p.name}}`, values[i]!)));
    return { method: op.method, url: url + query, headers: hdrs, ...(body !== undefined ? { payload: body } : {}) };
  });
}

describe('generated hostile requests, per operation of the OpenAPI document', () => {
  it('the document has operations to attack', () => {
    expect(ops.length).toBeGreaterThanOrEqual(5);
  });

  // Registered per operation at collection time would need the document before beforeAll; one test walks all.
  it('never answer 5xx, always the envelope, never half-write', async () => {
    const perOperation = Math.ceil(MIN_REQUESTS / ops.length);
    for (const op of ops) {
      await fc.assert(fc.asyncProperty(requestFor(op), (req) => send(t.app, op, req).then(() => undefined)), { numRuns: perOperation, ...(process.env.HOSTILE_SEED ? { seed: Number(process.env.HOSTILE_SEED) } : {}) });
    }
  }, 600_000);
});

describe('fixed hostile inputs on every operation with a body', () => {
  const deep = ['['.repeat(DEEP) + ']'.repeat(DEEP), `${'{"a":'.repeat(DEEP)}null${'}'.repeat(DEEP)}`];

  it(`${DEEP} levels of nesting are refused as invalid JSON on every operation, idempotent or not`, async () => {
    for (const op of ops.filter((o) => o.body)) {
      for (const text of [...deep, `{"name":"x","notes":${'['.repeat(40)}${']'.repeat(40)}}`]) {
        for (const key of [{}, { 'idempotency-key': `deep-${sent}` }] as Record<string, string>[]) {
          const url = op.path.replace(/\{\w+\}/g, 'abcdefabcdefabcdefabcdef');
          const res = await send(t.app, op, { method: op.method, url, headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json', ...key }, payload: text });
          // The object form of 10,000 levels is also over this app's 32 KiB body limit (not over a batch route's, ten times larger).
          const limit = op.path.endsWith('/batch') ? BODY_LIMIT * BATCH_BODY_LIMIT_FACTOR : BODY_LIMIT;
          const allowed = text.length > limit ? ['PAYLOAD_TOO_LARGE'] : ['INVALID_JSON'];
          expect(allowed, `${op.method} ${op.path}`).toContain(JSON.parse(res.body).code);
        }
      }
    }
  });

  it('prototype-pollution keys never reach Object.prototype', async () => {
    for (const op of ops.filter((o) => o.body && !o.path.includes('{'))) {
      for (const text of ['{"__proto__":{"polluted":true},"name":"x"}', '{"constructor":{"prototype":{"polluted":true}},"name":"x"}', '{"name":"x","prototype":{"polluted":true}}']) {
        const res = await send(t.app, op, { method: op.method, url: op.path, headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' }, payload: text });
        expect(res.statusCode).toBe(400);
      }
    }
  });

  it('text that no column can store faithfully is refused with the field named', async () => {
    const op = ops.find((o) => o.method === 'POST' && o.path.endsWith('/leads'))!;
    for (const bad of UNICODE_EDGES.filter((u) => /[\u0000\p{Cs}]/u.test(u))) {
      const res = await send(t.app, op, { method: 'POST', url: op.path, headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' }, payload: JSON.stringify({ name: `Ada ${bad}` }) });
      expect(JSON.parse(res.body)).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'name', code: 'invalid_character' }] });
    }
    const list = ops.find((o) => o.method === 'GET' && o.path.endsWith('/leads'))!;
    const res = await send(t.app, list, { method: 'GET', url: `${list.path}?q=a%00b`, headers: { authorization: `Bearer ${s.key}` } });
    expect(JSON.parse(res.body)).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'q', code: 'invalid_character' }] });
  });

  it('a body that is not UTF-8 is refused as invalid JSON', async () => {
    const op = ops.find((o) => o.method === 'POST' && o.path.endsWith('/leads'))!;
    const res = await send(t.app, op, { method: 'POST', url: op.path, headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' }, payload: Buffer.concat([Buffer.from('{"name":"Jos'), Buffer.from([0xe9]), Buffer.from('"}')]) });
    expect(JSON.parse(res.body)).toMatchObject({ code: 'INVALID_JSON' });
  });
});

describe('volume', () => {
  it(`at least ${MIN_REQUESTS} requests were sent in this run, reaching every layer`, () => {
    expect(sent).toBeGreaterThanOrEqual(MIN_REQUESTS);
    console.log(`${sent} requests, ${ops.length} operations: ${JSON.stringify(Object.fromEntries([...outcomes].sort((x, y) => y[1] - x[1])))}`);
    const seen = [...outcomes.keys()];
    for (const expected of ['200 SUCCESS', '201 SUCCESS', '400 VALIDATION_FAILED', '400 INVALID_JSON', '401 UNAUTHORIZED', '404 NOT_FOUND', '404 ROUTE_NOT_FOUND', '413 PAYLOAD_TOO_LARGE', '415 UNSUPPORTED_MEDIA_TYPE']) {
      expect(seen, JSON.stringify(Object.fromEntries(outcomes))).toContain(expected);
    }
  });
});
