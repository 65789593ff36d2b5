import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { addKey, seedOrg, type Seeded } from '../helpers/seed.js';
import { call, expectError } from '../helpers/http.js';

let t: TestApp;
let a: Seeded;
let b: Seeded;
const DOC = '/api/public/v1/openapi.json';
const P = '/api/public/v1';

beforeAll(async () => {
  t = await buildTestApp();
  a = await seedOrg(t.ctx);
  b = await seedOrg(t.ctx);
  await call(t.app, 'POST', '/objects', {
    auth: a.auth,
    body: {
      slug: 'projects',
      name: 'Projects',
      fields: [
        { key: 'title', label: 'Title', type: 'text', required: true },
        { key: 'budget', label: 'Budget', type: 'number' },
        { key: 'active', label: 'Active', type: 'boolean' },
        { key: 'due_on', label: 'Due on', type: 'date', role: 'due' },
        { key: 'kickoff_at', label: 'Kickoff', type: 'datetime' },
        { key: 'priority', label: 'Priority', type: 'select', options: ['low', 'high'] },
        { key: 'contact', label: 'Contact', type: 'email' },
        { key: 'site', label: 'Site', type: 'url' },
      ],
      stages: [{ key: 'planned', label: 'Planned' }, { key: 'done', label: 'Done' }],
    },
  });
  await call(t.app, 'POST', '/objects', { auth: a.auth, body: { slug: 'notes', name: 'Notes', fields: [{ key: 'body', label: 'Body', type: 'long_text' }] } });
  await call(t.app, 'POST', '/objects', { auth: b.auth, body: { slug: 'b-secret-object', name: 'Secret', fields: [{ key: 'b_secret_field', label: 'S', type: 'text' }] } });
});
afterAll(() => t.close());

describe('GET /openapi.json', () => {
  it('documents the object and record routes with their tags and the generic record schema', async () => {
    const doc = (await call(t.app, 'GET', DOC)).body;
    expect(doc.tags.map((tag: { name: string }) => tag.name)).toEqual(expect.arrayContaining(['Custom objects', 'Records']));
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining([`${P}/objects`, `${P}/objects/{slug}`, `${P}/objects/{object}/records`, `${P}/objects/{object}/records/{id}`]));
    expect(doc.paths[`${P}/objects`].post.tags).toEqual(['Custom objects']);
    expect(doc.paths[`${P}/objects/{object}/records`].get.tags).toEqual(['Records']);
    expect(doc.paths[`${P}/objects/{object}/records`].post.responses).toHaveProperty('422');
    expect(doc.components.schemas.Record).toMatchObject({ additionalProperties: true, properties: { id: {}, objectSlug: {}, stage: {} } });
    expect(doc.components.schemas.CustomObject).toBeDefined();
    expect(Object.keys(doc.components.schemas).filter((k) => k.startsWith('Record_'))).toEqual([]);
    expect(Object.keys(doc.paths).filter((k) => k.includes('/objects/projects'))).toEqual([]);
  });

  it('adds typed schemas and paths of the key\'s organization\'s objects', async () => {
    const res = await call(t.app, 'GET', DOC, { auth: a.auth });
    expect(res.status).toBe(200);
    const { components, paths } = res.body;
    const record = components.schemas.Record_projects;
    expect(record.required).toEqual(['id', 'objectSlug', 'stage', 'createdAt', 'updatedAt', 'deletedAt', 'externalId', 'title', 'budget', 'active', 'due_on', 'kickoff_at', 'priority', 'contact', 'site']);
    expect(record.additionalProperties).toBe(false);
    expect(record.properties.objectSlug).toMatchObject({ const: 'projects' });
    expect(record.properties.stage).toMatchObject({ type: 'string', enum: ['planned', 'done'] });
    expect(record.properties.title).toMatchObject({ type: 'string' });
    expect(record.properties.budget).toEqual({ anyOf: [expect.objectContaining({ type: 'number' }), { type: 'null' }] });
    expect(record.properties.active.anyOf[0]).toMatchObject({ type: 'boolean' });
    expect(record.properties.due_on.anyOf[0]).toMatchObject({ type: 'string', format: 'date-time' });
    expect(record.properties.priority.anyOf[0]).toMatchObject({ type: 'string', enum: ['low', 'high'] });
    expect(record.properties.contact.anyOf[0]).toMatchObject({ format: 'email' });
    expect(record.properties.site.anyOf[0]).toMatchObject({ format: 'uri' });

    const create = components.schemas.RecordCreate_projects;
    expect(create.required).toEqual(['title']);
    expect(create.additionalProperties).toBe(false);
    expect(create.properties.due_on.anyOf[0]).toMatchObject({ type: 'string' });
    expect(create.properties.due_on.anyOf[0].format).toBeUndefined();
    const update = components.schemas.RecordUpdate_projects;
    expect(update.required).toBeUndefined();
    expect(update.minProperties).toBe(1);
    expect(update.properties.title).toMatchObject({ type: 'string' });

    const list = paths[`${P}/objects/projects/records`];
    expect(list.get.parameters.map((p: { name: string }) => p.name)).toEqual(expect.arrayContaining(['q', 'stage', 'overdue', 'page', 'limit']));
    expect(list.get.parameters.find((p: { name: string }) => p.name === 'stage').schema).toMatchObject({ enum: ['planned', 'done'] });
    expect(list.get.parameters.some((p: { in: string }) => p.in === 'path')).toBe(false);
    expect(JSON.stringify(list.get.responses['200'])).toContain('#/components/schemas/Record_projects');
    expect(list.post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/RecordCreate_projects' });
    expect(list.post.responses).toHaveProperty('201');
    expect(list.post.responses).toHaveProperty('400');
    const one = paths[`${P}/objects/projects/records/{id}`];
    expect(one.patch.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/RecordUpdate_projects' });
    expect(one.get.parameters.map((p: { name: string }) => p.name)).toEqual(['id', 'if-none-match']);
    expect(one.delete.parameters.map((p: { name: string }) => p.name)).toEqual(['permanent', 'id', 'if-match']);
    // The record, or its minimal view for a key that may write records but not read them.
    expect(one.delete.responses['200'].content['application/json'].schema.properties.data.properties.record).toEqual({ anyOf: [{ $ref: '#/components/schemas/Record_projects' }, { $ref: '#/components/schemas/MinimalView' }] });
    expect(paths[`${P}/objects/projects/records/{id}/restore`].post.responses).toHaveProperty('200');
    expect(components.schemas.Record_notes.properties.stage).toEqual({ type: 'null' });
    expect(paths[`${P}/objects/{object}/records`]).toBeDefined();

    const batch = paths[`${P}/objects/projects/records/batch`];
    const item = batch.post.requestBody.content['application/json'].schema.properties.items.items;
    expect(Object.keys(item.properties)).toEqual(expect.arrayContaining(['ifMatch', 'externalId', 'stage', 'title', 'due_on']));
    expect(item.required).toEqual(['title']);
    expect(batch.patch.requestBody.content['application/json'].schema.properties.items.items.required).toEqual(['id']);
    const result = batch.post.responses['200'].content['application/json'].schema.properties.data.properties.results.items;
    expect(result.properties.record).toEqual({ anyOf: [{ $ref: '#/components/schemas/Record_projects' }, { $ref: '#/components/schemas/MinimalView' }] });
    expect(paths[`${P}/objects/{object}/records/batch`]).toBeUndefined();
  });

  it('generates a typed client: the record type has the object\'s fields with their JSON types', async () => {
    const doc = (await call(t.app, 'GET', DOC, { auth: a.auth })).body;
    const types = astToString(await openapiTS(doc));
    const recordType = /Record_projects: \{([\s\S]*?)\n {8}\};/.exec(types)?.[1] ?? '';
    expect(recordType).toMatch(/title: string;/);
    expect(recordType).toMatch(/budget: number \| null;/);
    expect(recordType).toMatch(/active: boolean \| null;/);
    expect(recordType).toMatch(/priority: \("low" \| "high"\) \| null;/);
    expect(recordType).toMatch(/stage: "planned" \| "done";/);
    expect(types).toContain('"/api/public/v1/objects/projects/records"');
  });

  it('never shows one organization\'s objects to another', async () => {
    const docA = JSON.stringify((await call(t.app, 'GET', DOC, { auth: a.auth })).body);
    const docB = JSON.stringify((await call(t.app, 'GET', DOC, { auth: b.auth })).body);
    expect(docA).not.toContain('b-secret-object');
    expect(docA).not.toContain('b_secret_field');
    expect(docB).toContain('Record_b-secret-object');
    expect(docB).not.toContain('Record_projects');
    expect(docB).not.toContain('kickoff_at');
  });

  it('serves the generic document to a key that may not read records, 401 to an invalid key', async () => {
    const leadsOnly = await addKey(t.ctx, a.orgId, ['leads:read']);
    const generic = (await call(t.app, 'GET', DOC, { auth: leadsOnly.auth })).body;
    expect(generic.components.schemas.Record_projects).toBeUndefined();
    const admin = await addKey(t.ctx, a.orgId, ['objects:admin']);
    expect((await call(t.app, 'GET', DOC, { auth: admin.auth })).body.components.schemas.Record_projects).toBeDefined();
    const res = await call(t.app, 'GET', DOC, { auth: { authorization: 'Bearer crm_live_notarealkey' } });
    expectError(res, 401, 'UNAUTHORIZED');
    expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
    const plain = (await call(t.app, 'GET', DOC)).body;
    expect(plain.components.schemas.Record_projects).toBeUndefined();
  });

  it('types the custom fields of the built-ins a key may use, whatever its records scopes', async () => {
    const c = await seedOrg(t.ctx);
    await call(t.app, 'POST', '/objects', { auth: c.auth, body: { slug: 'c_projects', name: 'C projects', fields: [{ key: 'c_title', label: 'Title', type: 'text' }] } });
    const fields = [
      { key: 'visitDate', label: 'Visit date', type: 'date', required: false },
      { key: 'tier', label: 'Tier', type: 'select', options: ['gold', 'silver'] },
    ];
    expect((await call(t.app, 'PATCH', '/objects/leads', { auth: c.auth, body: { fields } })).status).toBe(200);
    expect((await call(t.app, 'PATCH', '/objects/deals', { auth: c.auth, body: { fields: [{ key: 'lossReason', label: 'Loss reason', type: 'text' }] } })).status).toBe(200);

    const integration = await addKey(t.ctx, c.orgId, ['leads:read', 'leads:write']);
    const res = await call(t.app, 'GET', DOC, { auth: integration.auth });
    expect(res.status).toBe(200);
    const { components, paths } = res.body;
    expect(components.schemas.Lead.properties.visitDate.anyOf[0]).toMatchObject({ type: 'string', format: 'date-time' });
    expect(components.schemas.Lead.properties.tier).toEqual({ anyOf: [expect.objectContaining({ type: 'string', enum: ['gold', 'silver'] }), { type: 'null' }] });
    expect(components.schemas.Lead.required).toEqual(expect.arrayContaining(['visitDate', 'tier']));
    const create = paths[`${P}/leads`].post.requestBody.content['application/json'].schema;
    expect(Object.keys(create.properties)).toEqual(expect.arrayContaining(['name', 'email', 'visitDate', 'tier']));
    expect(create.additionalProperties).toBe(false);
    expect(paths[`${P}/leads/{id}`].patch.requestBody.content['application/json'].schema.properties.tier).toBeDefined();
    const params = paths[`${P}/leads`].get.parameters.map((p: { name: string }) => p.name);
    expect(params).toEqual(expect.arrayContaining(['filter[visitDate]', 'filter[visitDate][gte]', 'filter[tier]']));
    // Only the built-ins the key may use, and no custom object's records without the records scopes.
    expect(components.schemas.Deal.properties.lossReason).toBeUndefined();
    expect(Object.keys(components.schemas).filter((k) => k.startsWith('Record_'))).toEqual([]);
    expect(Object.keys(paths).filter((k) => k.includes('c_projects'))).toEqual([]);
    expect(JSON.stringify(res.body)).not.toContain('c_title');

    // A generated client takes the organization's own fields in the create body.
    const types = astToString(await openapiTS(res.body));
    expect(types).toMatch(/tier\?: \("gold" \| "silver"\) \| null;/);

    // The shared generic document is not changed by it: other keys and anonymous callers still get it plain.
    expect((await call(t.app, 'GET', DOC)).body.components.schemas.Lead.properties.visitDate).toBeUndefined();
    const dealsOnly = await addKey(t.ctx, c.orgId, ['deals:write']);
    const deals = (await call(t.app, 'GET', DOC, { auth: dealsOnly.auth })).body.components.schemas;
    expect(deals.Deal.properties.lossReason).toBeDefined();
    expect(deals.Lead.properties.visitDate).toBeUndefined();
  });
});
