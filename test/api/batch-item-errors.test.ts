import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';

/**
 * What the OpenAPI document says a batch item can answer is what it does answer: every item failure the batch
 * path produces, driven here one by one, has a code of `BatchItemError.code` and a status of the results'
 * `status`, and each of those is produced; the examples show one realistic result per outcome.
 */
let t: TestApp;
let s: Seeded;
const DOC = '/api/public/v1/openapi.json';
const UNKNOWN_ID = 'abcdefabcdefabcdefabcdef';

beforeAll(async () => {
  t = await buildTestApp();
  s = await seedOrg(t.ctx, { rateLimitPerMinute: 1_000_000 });
  expect((await call(t.app, 'POST', '/objects', { auth: s.auth, body: { slug: 'parcels', name: 'Parcels', fields: [{ key: 'title', label: 'Title', type: 'text' }] } })).status).toBe(201);
});
afterAll(() => t.close());

type Result = { index: number; status: number; error?: { code: string; message: string }; lead?: unknown; etag?: string };

const document = async (auth?: Record<string, string>) => (await call(t.app, 'GET', DOC, auth ? { auth } : {})).body;
const resultsSchema = (doc: any, path: string, method: string) => doc.paths[`/api/public/v1${path}`][method].responses['200'].content['application/json'];

async function batch(method: 'POST' | 'PATCH', body: unknown): Promise<Result[]> {
  const res = await call(t.app, method, '/leads/batch', { auth: s.auth, body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data.results as Result[];
}

const lead = async (body: Record<string, unknown>) => (await call(t.app, 'POST', '/leads', { auth: s.auth, body })).body.data.lead as { id: string };

describe('batch item errors', () => {
  it('every failure an item can have is a code and status the document lists, and every listed one happens', async () => {
    const held = await lead({ name: 'Holder', externalId: 'held-1' });
    const trashed = await lead({ name: 'Trashed', externalId: 'trashed-1' });
    expect((await call(t.app, 'DELETE', `/leads/${trashed.id}`, { auth: s.auth })).status).toBe(200);
    const target = await lead({ name: 'Target', email: 'target@example.com' });
    const posted = await batch('POST', {
      upsertBy: 'externalId',
      items: [
        { name: 'New', externalId: 'new-1' },
        { name: 'Holder again', externalId: 'held-1' },
        { name: 'Bad', externalId: 'bad-1', email: 'not-an-email' },
        { name: 'Revived', externalId: 'trashed-1' },
        { name: 'Stale', externalId: 'held-1', ifMatch: '"stale"' },
      ],
    });
    expect(posted.map((r) => [r.status, r.error?.code])).toEqual([
      [201, undefined],
      [200, undefined],
      [400, 'VALIDATION_FAILED'],
      [409, 'EXTERNAL_ID_TAKEN'],
      [412, 'PRECONDITION_FAILED'],
    ]);
    const created = await batch('POST', { items: [{ name: 'Taken', externalId: 'held-1' }, { name: 'No holder', ifMatch: '"v"' }, 'not an object'] });
    expect(created.map((r) => [r.status, r.error?.code])).toEqual([
      [409, 'EXTERNAL_ID_TAKEN'],
      [412, 'PRECONDITION_FAILED'],
      [400, 'VALIDATION_FAILED'],
    ]);
    const patched = await batch('PATCH', {
      items: [
        { id: target.id, company: 'Changed' },
        { id: target.id, email: 'still-not-an-email' },
        { id: UNKNOWN_ID, company: 'Nobody' },
        { id: trashed.id, company: 'In the trash' },
        { id: target.id, externalId: 'held-1' },
        { id: held.id, ifMatch: '"stale"', company: 'Late' },
        { id: 'not-an-id', company: 'x' },
      ],
    });
    expect(patched.map((r) => [r.status, r.error?.code])).toEqual([
      [200, undefined],
      [400, 'VALIDATION_FAILED'],
      [404, 'NOT_FOUND'],
      [404, 'NOT_FOUND'],
      [409, 'EXTERNAL_ID_TAKEN'],
      [412, 'PRECONDITION_FAILED'],
      [400, 'VALIDATION_FAILED'],
    ]);
    const doc = await document();
    const all = [...posted, ...created, ...patched];
    const codes = [...new Set(all.flatMap((r) => (r.error ? [r.error.code] : [])))].sort();
    expect(codes).toEqual([...doc.components.schemas.BatchItemError.properties.code.enum].sort());
    const statuses = resultsSchema(doc, '/leads/batch', 'post').schema.properties.data.properties.results.items.properties.status.enum;
    expect([...new Set(all.map((r) => r.status))].sort()).toEqual([...statuses].sort());
  });

  it('each batch route\'s example shows one realistic result per outcome: a resource only where it is returned, an error only where one is', async () => {
    const doc = await document(s.auth);
    const paths = Object.keys(doc.paths).filter((p) => p.endsWith('/batch')).map((p) => p.replace('/api/public/v1', ''));
    expect(paths.sort()).toEqual(['/accounts/batch', '/deals/batch', '/leads/batch', '/objects/parcels/records/batch']);
    const codes: string[] = doc.components.schemas.BatchItemError.properties.code.enum;
    for (const path of paths) {
      const noun = path === '/objects/parcels/records/batch' ? 'record' : path.slice(1, -'s/batch'.length);
      const outcomes = (method: string) =>
        (resultsSchema(doc, path, method).example.data.results as Record<string, any>[]).map((r) => {
          expect(r.error === undefined || codes.includes(r.error.code), `${method} ${path}`).toBe(true);
          expect(r[noun] !== undefined, `${method} ${path}: ${r.status}`).toBe(r.status < 300 || r.status === 412);
          expect(r.etag !== undefined).toBe(r[noun] !== undefined);
          return [r.index, r.status, r.error?.code];
        });
      expect(outcomes('post')).toEqual([[0, 201, undefined], [1, 200, undefined], [2, 400, 'VALIDATION_FAILED']]);
      expect(outcomes('patch')).toEqual([[0, 200, undefined], [1, 412, 'PRECONDITION_FAILED'], [2, 404, 'NOT_FOUND']]);
    }
  });
});
