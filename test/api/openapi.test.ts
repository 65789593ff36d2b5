import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { call } from '../helpers/http.js';
import { ERROR_DESCRIPTIONS } from '../../src/errors.js';

let t: TestApp;
let doc: any;

beforeAll(async () => {
  t = await buildTestApp();
  doc = (await call(t.app, 'GET', '/api/public/v1/openapi.json')).body;
});
afterAll(() => t.close());

describe('GET /openapi.json', () => {
  it('is a valid OpenAPI 3.1 document, served without a key at both addresses', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    const root = await call(t.app, 'GET', '/openapi.json');
    expect(root.body.paths).toEqual(doc.paths);
  });

  it('documents the bearer scheme, and every authenticated operation its error responses', () => {
    expect(doc.components.securitySchemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    const operations = Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops as object).map(([method, op]) => ({ path, method, op })));
    expect(operations.length).toBeGreaterThanOrEqual(5);
    for (const { path, method, op } of operations) {
      for (const status of ['401', '403', '429', '500']) expect(op.responses[status], `${method} ${path} ${status}`).toBeDefined();
      if (op.requestBody) {
        for (const status of ['400', '413', '415']) expect(op.responses[status], `${method} ${path} ${status}`).toBeDefined();
      }
    }
    const post = doc.paths['/api/public/v1/leads'].post;
    expect(post.responses['201']).toBeDefined();
    expect(post.responses['422']).toEqual({ $ref: '#/components/responses/IdempotencyKeyReused' });
    expect(doc.components.responses.IdempotencyKeyReused.description).toContain('IDEMPOTENCY_KEY_REUSED');
    expect(post.parameters.some((p: { name: string; in: string }) => p.name === 'idempotency-key' && p.in === 'header')).toBe(true);
    expect(post.requestBody.content['application/json'].example).toMatchObject({ name: 'Ada Lovelace' });
    // The example lead reads as a usual one: live, no duplicate, an external id that is the integrator's own key.
    const lead = post.responses['201'].content['application/json'].example.data.lead;
    expect(lead).toMatchObject({ deletedAt: null, duplicateOf: null, externalId: 'erp-10042' });
    expect(lead.accountId).toMatch(/^[0-9a-f]{24}$/);
  });

  it('documents Idempotent-Replayed on the successes of every operation that takes an Idempotency-Key, and only there', () => {
    const replayable: string[] = [];
    for (const [path, operations] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
      for (const [method, op] of Object.entries(operations)) {
        const takesKey = (op.parameters ?? []).some((p: { in: string; name: string }) => p.in === 'header' && p.name === 'idempotency-key');
        for (const [status, response] of Object.entries(op.responses as Record<string, { headers?: Record<string, unknown> }>)) {
          const documented = response.headers?.['Idempotent-Replayed'] !== undefined;
          expect(documented, `${method} ${path} ${status}`).toBe(takesKey && status.startsWith('2'));
          if (documented) replayable.push(`${method} ${path}`);
        }
      }
    }
    expect(replayable).toEqual(expect.arrayContaining(['post /api/public/v1/leads', 'post /api/public/v1/leads/batch', 'post /api/public/v1/objects/{object}/records']));
    expect(doc.components.headers['Idempotent-Replayed'].schema).toEqual({ type: 'string', enum: ['true'] });
  });

  it('documents which refusals carry the rate limit headers: not a 401, a 413 only when refused while its body was read', () => {
    const { Unauthorized, PayloadTooLarge } = doc.components.responses;
    expect(Object.keys(Unauthorized.headers)).toEqual(['X-Request-Id']);
    expect(Object.keys(PayloadTooLarge.headers)).toContain('X-RateLimit-Limit');
    expect(PayloadTooLarge.description).toContain('The rate-limit headers come only with a body refused while it was being read');
  });

  it('lists every error code with its description', () => {
    const envelope = doc.components.schemas.ErrorEnvelope;
    expect(envelope.properties.code.enum.sort()).toEqual(Object.keys(ERROR_DESCRIPTIONS).sort());
  });

  it('documents the lead fields and enums the API validates', () => {
    const body = doc.paths['/api/public/v1/leads'].post.requestBody.content['application/json'].schema;
    expect(body.required).toEqual(['name']);
    // Open for the organization's custom lead fields (checked by the service); its own document closes it.
    expect(body.additionalProperties).toBe(true);
    expect(Object.keys(body.properties)).toEqual(expect.arrayContaining(['email', 'phoneNumber', 'source', 'sourceCampaign', 'status', 'ownerId', 'accountId']));
  });
});
