import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call, expectError } from '../helpers/http.js';

/** Issue 14: an organization can't grow the database without bound; the limits are documented ones. */
const LIMIT = 3;
let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp({ env: { MAX_OBJECTS_PER_ORG: String(LIMIT) } });
});
afterAll(() => t.close());

const createObject = (who: Seeded, slug: string, extra: Record<string, unknown> = {}) =>
  call(t.app, 'POST', '/objects', { auth: who.auth, body: { slug, name: slug, ...extra } });

describe('custom objects per organization (MAX_OBJECTS_PER_ORG)', () => {
  it('refuses the object beyond the limit with 409 LIMIT_EXCEEDED; other organizations are not affected', async () => {
    const a = await seedOrg(t.ctx);
    const b = await seedOrg(t.ctx);
    for (let i = 1; i <= LIMIT; i++) expect((await createObject(a, `obj_${i}`)).status).toBe(201);
    const refused = await createObject(a, 'one_too_many');
    expectError(refused, 409, 'LIMIT_EXCEEDED');
    expect(refused.body.message).toContain(`${LIMIT} custom objects`);
    // The built-in leads, accounts and deals are listed and counted too; they are not custom objects.
    expect((await call(t.app, 'GET', '/objects', { auth: a.auth })).body.data.pagination.total).toBe(LIMIT + 3);
    expect((await createObject(b, 'obj_1')).status).toBe(201);
  });

  it('holds when creates race at the limit', async () => {
    const c = await seedOrg(t.ctx);
    const results = await Promise.all(Array.from({ length: LIMIT * 2 }, (_, i) => createObject(c, `race_${i}`)));
    expect(results.filter((r) => r.status === 201)).toHaveLength(LIMIT);
    for (const r of results.filter((x) => x.status !== 201)) expectError(r, 409, 'LIMIT_EXCEEDED');
  });

  it('is listed among the answers of POST /objects in the OpenAPI document', async () => {
    const doc = (await call(t.app, 'GET', '/api/public/v1/openapi.json')).body;
    // The 409 is a shared, named response: follow its reference to the description that lists the codes.
    const ref: string = doc.paths['/api/public/v1/objects'].post.responses['409'].$ref;
    const conflict = doc.components.responses[ref.split('/').pop()!].description;
    expect(conflict).toContain('LIMIT_EXCEEDED');
    expect(conflict).toContain('CONFLICT');
    expect(conflict).toContain('IDEMPOTENCY_KEY_IN_USE');
  });
});

describe('fields and stages per object', () => {
  const field = (i: number) => ({ key: `f${i}`, label: `F ${i}`, type: 'text' });
  const stage = (i: number) => ({ key: `s${i}`, label: `S ${i}` });

  it('allows 100 fields and 50 stages, and refuses one more of either with 400 VALIDATION_FAILED', async () => {
    const d = await seedOrg(t.ctx);
    const fields = Array.from({ length: 100 }, (_, i) => field(i));
    const stages = Array.from({ length: 50 }, (_, i) => stage(i));
    expect((await createObject(d, 'widest', { fields, stages })).status).toBe(201);
    const tooManyFields = expectError(await createObject(d, 'wider', { fields: [...fields, field(100)] }), 400, 'VALIDATION_FAILED');
    expect(tooManyFields.map((e) => e.field)).toEqual(['fields']);
    const tooManyStages = expectError(await call(t.app, 'PATCH', '/objects/widest', { auth: d.auth, body: { stages: [...stages, stage(50)] } }), 400, 'VALIDATION_FAILED');
    expect(tooManyStages.map((e) => e.field)).toEqual(['stages']);
  });
});
