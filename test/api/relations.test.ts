import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call, expectError } from '../helpers/http.js';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { importCsv } from '../../src/modules/import/csv-import.js';
import { recordImportAdapter } from '../../src/modules/objects/records.import.js';
import { callError, callOk, connect, httpTransport, listen } from '../helpers/mcp.js';
import { listEvents } from '../../src/modules/events/outbox.store.js';

/*
 * Relation and multi_select fields (contract §9): a relation holds the id of a live lead, account, deal or
 * record of the organization, checked when written; `filter[field]=<id>` finds the records pointing at one
 * item; a multi_select holds distinct options and `filter[field]=<option>` finds the records holding it. The
 * built-ins' reverse lookups (GET /leads?accountId=, GET /deals?leadId=) page with cursors.
 */

let t: TestApp;
let a: Seeded;
let b: Seeded;

const FIELDS = [
  { key: 'title', label: 'Title', type: 'text', required: true },
  { key: 'lead', label: 'Lead', type: 'relation', target: 'leads' },
  { key: 'account', label: 'Account', type: 'relation', target: 'accounts' },
  { key: 'deal', label: 'Deal', type: 'relation', target: 'deals' },
  { key: 'parent', label: 'Parent', type: 'relation', target: 'visits' },
  { key: 'tags', label: 'Tags', type: 'multi_select', options: ['red', 'green', 'blue'] },
];

const post = (path: string, body: unknown, who: Seeded = a) => call(t.app, 'POST', path, { auth: who.auth, body });
const patch = (path: string, body: unknown, who: Seeded = a) => call(t.app, 'PATCH', path, { auth: who.auth, body });
const get = (path: string, who: Seeded = a) => call(t.app, 'GET', path, { auth: who.auth });

async function created(path: string, body: unknown, key: string, who: Seeded = a): Promise<string> {
  const res = await post(path, body, who);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data[key].id;
}
const lead = (name: string, extra: Record<string, unknown> = {}, who: Seeded = a) => created('/leads', { name, ...extra }, 'lead', who);
const visit = (body: Record<string, unknown>, who: Seeded = a) => created('/objects/visits/records', { title: 'v', ...body }, 'record', who);

/** Every page of a list, following `nextCursor`, as the ids in order. */
async function allPages(path: string, key: string, limit = 2): Promise<string[]> {
  const ids: string[] = [];
  let after: string | null = null;
  for (let pages = 0; pages < 50; pages++) {
    const sep = path.includes('?') ? '&' : '?';
    const res = await get(`${path}${sep}limit=${limit}${after ? `&after=${encodeURIComponent(after)}` : ''}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    ids.push(...res.body.data[key].map((item: { id: string }) => item.id));
    after = res.body.data.pagination.nextCursor;
    if (after === null) return ids;
  }
  throw new Error('too many pages');
}

beforeAll(async () => {
  t = await buildTestApp();
  a = await seedOrg(t.ctx, { rateLimitPerMinute: 100_000 });
  b = await seedOrg(t.ctx, { rateLimitPerMinute: 100_000 });
  for (const who of [a, b]) expect((await post('/objects', { slug: 'visits', name: 'Visits', fields: FIELDS }, who)).status).toBe(201);
});
afterAll(() => t.close());

describe('defining relation and multi_select fields', () => {
  it('requires a target exactly on relations and options on multi_selects', async () => {
    const res = await post('/objects', {
      slug: 'bad',
      name: 'Bad',
      fields: [
        { key: 'a', label: 'A', type: 'relation' },
        { key: 'b', label: 'B', type: 'text', target: 'leads' },
        { key: 'c', label: 'C', type: 'multi_select' },
      ],
    });
    const errors = expectError(res, 400, 'VALIDATION_FAILED');
    expect(errors.map((e) => `${e.field}:${e.code}`).sort()).toEqual(['fields.0.target:required', 'fields.1.target:not_allowed', 'fields.2.options:required']);
  });

  it('refuses a target that is neither a built-in nor an object of the organization', async () => {
    const res = await post('/objects', { slug: 'bad', name: 'Bad', fields: [{ key: 'x', label: 'X', type: 'relation', target: 'nowhere' }] });
    expect(expectError(res, 400, 'VALIDATION_FAILED')).toEqual([expect.objectContaining({ field: 'fields.0.target', code: 'not_found' })]);
    const own = await post('/objects', { slug: 'b-only', name: 'B only' }, b);
    expect(own.status).toBe(201);
    const foreign = await post('/objects', { slug: 'bad', name: 'Bad', fields: [{ key: 'x', label: 'X', type: 'relation', target: 'b-only' }] });
    expect(expectError(foreign, 400, 'VALIDATION_FAILED')[0]!.field).toBe('fields.0.target');
  });

  it('lists the target and options in the definition', async () => {
    const res = await get('/objects/visits');
    expect(res.body.data.object.fields).toContainEqual({ key: 'lead', label: 'Lead', type: 'relation', required: false, target: 'leads' });
    expect(res.body.data.object.fields).toContainEqual({ key: 'tags', label: 'Tags', type: 'multi_select', required: false, options: ['red', 'green', 'blue'] });
  });
});

describe('writing a relation', () => {
  it('stores the id of a live lead, account, deal or record of the organization', async () => {
    const leadId = await lead('Ann');
    const accountId = await created('/accounts', { name: 'Acme' }, 'account');
    const dealId = await created('/deals', { name: 'Big' }, 'deal');
    const parentId = await visit({});
    const res = await post('/objects/visits/records', { title: 'kid', lead: leadId, account: accountId, deal: dealId, parent: parentId });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data.record).toMatchObject({ lead: leadId, account: accountId, deal: dealId, parent: parentId, tags: null });
    const updated = await patch(`/objects/visits/records/${res.body.data.record.id}`, { lead: null, account: accountId });
    expect(updated.status).toBe(200);
    expect(updated.body.data.record).toMatchObject({ lead: null, account: accountId });
  });

  it('refuses a missing, trashed, foreign or other-kind id, naming the field and not the value', async () => {
    const trashed = await lead('Gone');
    expect((await call(t.app, 'DELETE', `/leads/${trashed}`, { auth: a.auth })).status).toBe(200);
    const foreign = await lead('Theirs', {}, b);
    const accountId = await created('/accounts', { name: 'Not a lead' }, 'account');
    for (const id of [trashed, foreign, accountId, '0000000000000000deadbeef']) {
      const res = await post('/objects/visits/records', { title: 'x', lead: id });
      const errors = expectError(res, 400, 'VALIDATION_FAILED');
      expect(errors).toEqual([expect.objectContaining({ field: 'lead', code: 'not_found' })]);
      expect(JSON.stringify(res.body)).not.toContain(id);
    }
    const existing = await visit({});
    expect(expectError(await patch(`/objects/visits/records/${existing}`, { lead: trashed }), 400, 'VALIDATION_FAILED')[0]!.field).toBe('lead');
  });

  it('refuses a value that is not an id', async () => {
    for (const value of ['abc', 42, ['0000000000000000deadbeef']]) {
      const errors = expectError(await post('/objects/visits/records', { title: 'x', account: value }), 400, 'VALIDATION_FAILED');
      expect(errors[0]).toMatchObject({ field: 'account' });
    }
  });

  it('refuses a change of target once records hold the field, and allows it before', async () => {
    const def = (target: string) => ({ fields: FIELDS.map((f) => (f.key === 'deal' ? { ...f, target } : f)) });
    expect(expectError(await patch('/objects/visits', def('accounts')), 400, 'VALIDATION_FAILED')[0]).toMatchObject({ field: 'fields.3.target', code: 'in_use' });
    expect((await post('/objects', { slug: 'fresh', name: 'Fresh', fields: [{ key: 'ref', label: 'Ref', type: 'relation', target: 'leads' }] })).status).toBe(201);
    const res = await patch('/objects/fresh', { fields: [{ key: 'ref', label: 'Ref', type: 'relation', target: 'accounts' }] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.object.fields[0].target).toBe('accounts');
  });
});

describe('reverse lookup: filter[field]=<id>', () => {
  it('lists the records pointing at one item, across cursor pages, and only the organization\'s', async () => {
    const target = await lead('Target');
    const other = await lead('Other');
    const pointing: string[] = [];
    for (let i = 0; i < 5; i++) {
      pointing.push(await visit({ title: `p${i}`, lead: target }));
      await visit({ title: `o${i}`, lead: other });
    }
    const found = await allPages(`/objects/visits/records?filter[lead]=${target}`, 'records');
    expect(found).toEqual([...pointing].reverse());
    const ascending = await allPages(`/objects/visits/records?filter[lead]=${target}&sort=createdAt`, 'records', 3);
    expect(ascending).toEqual(pointing);
    expect((await get(`/objects/visits/records?filter[lead]=${target}`, b)).body.data.records).toEqual([]);
    expect(expectError(await get('/objects/visits/records?filter[lead]=nope'), 400, 'VALIDATION_FAILED')[0]!.field).toBe('filter[lead]');
  });

  it('keeps a link to a trashed target (GET of the target is 404) and restores cleanly', async () => {
    const target = await lead('Trash me');
    const rec = await visit({ lead: target });
    expect((await call(t.app, 'DELETE', `/leads/${target}`, { auth: a.auth })).status).toBe(200);
    expect((await get(`/leads/${target}`)).status).toBe(404);
    expect((await get(`/objects/visits/records/${rec}`)).body.data.record.lead).toBe(target);
    expect((await get(`/objects/visits/records?filter[lead]=${target}`)).body.data.records.map((r: { id: string }) => r.id)).toEqual([rec]);
    // The record keeps working for its other fields; pointing at the trashed lead anew is refused.
    expect((await patch(`/objects/visits/records/${rec}`, { title: 'renamed' })).status).toBe(200);
    expect((await post('/objects/visits/records', { title: 'new', lead: target })).status).toBe(400);
    expect((await post(`/leads/${target}/restore`, {})).status).toBe(200);
    expect((await post('/objects/visits/records', { title: 'new', lead: target })).status).toBe(201);
  });

  it('keeps the id of an erased lead: the record stays, the lead answers 404', async () => {
    const target = await lead('Erin', { email: 'erin.relation@example.com' });
    const rec = await visit({ lead: target });
    const erasure = await post('/privacy/erasures', { email: 'erin.relation@example.com' });
    expect(erasure.status, JSON.stringify(erasure.body)).toBe(201);
    expect(erasure.body.data.erasure.matched.leads).toBe(1);
    expect((await get(`/leads/${target}`)).status).toBe(404);
    expect((await get(`/objects/visits/records/${rec}`)).body.data.record.lead).toBe(target);
    expect((await get(`/objects/visits/records?filter[lead]=${target}`)).body.data.records.map((r: { id: string }) => r.id)).toEqual([rec]);
  });

  it('keeps the id of a purged record target', async () => {
    const parent = await visit({ title: 'parent' });
    const child = await visit({ title: 'child', parent });
    expect((await call(t.app, 'DELETE', `/objects/visits/records/${parent}?permanent=true`, { auth: a.auth })).status).toBe(200);
    expect((await get(`/objects/visits/records/${child}`)).body.data.record.parent).toBe(parent);
  });
});

describe('multi_select', () => {
  it('stores distinct options in the order the field lists them', async () => {
    const res = await post('/objects/visits/records', { title: 'm', tags: ['blue', 'red'] });
    expect(res.status).toBe(201);
    expect(res.body.data.record.tags).toEqual(['red', 'blue']);
    const id = res.body.data.record.id;
    // The same set in another order is no change (no event, same updatedAt).
    const same = await patch(`/objects/visits/records/${id}`, { tags: ['red', 'blue'] });
    expect(same.body.data.record.updatedAt).toBe(res.body.data.record.updatedAt);
    expect((await patch(`/objects/visits/records/${id}`, { tags: [] })).body.data.record.tags).toBeNull();
  });

  it('refuses duplicates, unknown options and non-arrays', async () => {
    for (const [tags, code] of [[['red', 'red'], 'duplicate'], [['pink'], 'invalid_value'], ['red', 'invalid_type'], [[1], 'invalid_type']] as const) {
      const res = await post('/objects/visits/records', { title: 'm', tags });
      expect(expectError(res, 400, 'VALIDATION_FAILED')).toEqual([expect.objectContaining({ field: 'tags', code })]);
    }
  });

  it('filters by one option', async () => {
    const both = await visit({ tags: ['red', 'green'] });
    const green = await visit({ tags: ['green'] });
    await visit({ tags: ['blue'] });
    const found = (await get('/objects/visits/records?filter[tags]=green&limit=100')).body.data.records.map((r: { id: string }) => r.id);
    expect(found).toEqual([green, both]);
    expect(expectError(await get('/objects/visits/records?filter[tags]=pink'), 400, 'VALIDATION_FAILED')[0]!.field).toBe('filter[tags]');
    // Changing the value replaces its index rows.
    await patch(`/objects/visits/records/${both}`, { tags: ['red'] });
    expect((await get('/objects/visits/records?filter[tags]=green&limit=100')).body.data.records.map((r: { id: string }) => r.id)).toEqual([green]);
  });

  it('required means at least one option', async () => {
    expect((await post('/objects', { slug: 'tagged', name: 'Tagged', fields: [{ key: 'tags', label: 'Tags', type: 'multi_select', options: ['a', 'b'], required: true }] })).status).toBe(201);
    expect(expectError(await post('/objects/tagged/records', {}), 400, 'VALIDATION_FAILED')[0]).toMatchObject({ field: 'tags', code: 'required' });
    expect(expectError(await post('/objects/tagged/records', { tags: [] }), 400, 'VALIDATION_FAILED')[0]).toMatchObject({ field: 'tags', code: 'required' });
    const id = await created('/objects/tagged/records', { tags: ['b'] }, 'record');
    expect(expectError(await patch(`/objects/tagged/records/${id}`, { tags: [] }), 400, 'VALIDATION_FAILED')[0]).toMatchObject({ field: 'tags', code: 'required' });
  });

  it('refuses removing an option in use, allows it once unused', async () => {
    expect((await post('/objects', { slug: 'opts', name: 'Opts', fields: [{ key: 'tags', label: 'Tags', type: 'multi_select', options: ['a', 'b', 'c'] }] })).status).toBe(201);
    const id = await created('/objects/opts/records', { tags: ['a', 'b'] }, 'record');
    const without = (options: string[]) => ({ fields: [{ key: 'tags', label: 'Tags', type: 'multi_select', options }] });
    const refused = expectError(await patch('/objects/opts', without(['a', 'c'])), 400, 'VALIDATION_FAILED');
    expect(refused[0]).toMatchObject({ field: 'fields.0.options', code: 'in_use' });
    expect(refused[0]!.message).toContain('"b"');
    expect((await patch('/objects/opts', without(['a', 'b']))).status).toBe(200);
    await patch(`/objects/opts/records/${id}`, { tags: ['a'] });
    expect((await patch('/objects/opts', without(['a']))).status).toBe(200);
  });

  it('reads back in the options\' current order after a reorder; the same set in another order changes nothing', async () => {
    const define = (options: string[]) => ({ fields: [{ key: 'tags', label: 'Tags', type: 'multi_select', options }] });
    expect((await post('/objects', { slug: 'ordered', name: 'Ordered', ...define(['a', 'b', 'c']) })).status).toBe(201);
    const record = (await post('/objects/ordered/records', { tags: ['c', 'a'] })).body.data.record;
    expect(record.tags).toEqual(['a', 'c']);
    expect((await patch('/objects/ordered', define(['c', 'b', 'a']))).status).toBe(200);
    expect((await get(`/objects/ordered/records/${record.id}`)).body.data.record.tags).toEqual(['c', 'a']);
    expect((await get('/objects/ordered/records')).body.data.records[0].tags).toEqual(['c', 'a']);
    const events = await listEvents(t.ctx.database.db, a.orgId, { objectId: record.id });
    for (const tags of [['a', 'c'], ['c', 'a']]) {
      const same = await patch(`/objects/ordered/records/${record.id}`, { tags });
      expect(same.body.data.record).toMatchObject({ tags: ['c', 'a'], updatedAt: record.updatedAt });
    }
    expect(await listEvents(t.ctx.database.db, a.orgId, { objectId: record.id })).toHaveLength(events.length);
    await patch(`/objects/ordered/records/${record.id}`, { tags: ['b', 'a'] });
    const [updated] = (await listEvents(t.ctx.database.db, a.orgId, { objectId: record.id })).slice(events.length);
    expect(updated).toMatchObject({ type: 'record.updated', data: { changes: { before: { tags: ['c', 'a'] }, after: { tags: ['b', 'a'] } } } });
  });
});

describe('built-in reverse lookups', () => {
  it('GET /leads?accountId= pages with cursors and sorts', async () => {
    const account = await created('/accounts', { name: 'Leads inc' }, 'account');
    const mine: string[] = [];
    for (const name of ['d', 'b', 'e', 'a', 'c']) {
      mine.push(await lead(name, { accountId: account }));
      await lead(`${name}-other`);
    }
    expect(await allPages(`/leads?accountId=${account}`, 'leads')).toEqual([...mine].reverse());
    const byName = await allPages(`/leads?accountId=${account}&sort=name`, 'leads');
    expect(byName).toEqual([mine[3], mine[1], mine[4], mine[0], mine[2]]);
  });

  it('GET /deals?leadId= and ?accountId= page with cursors', async () => {
    const source = await lead('Deal source');
    const account = await created('/accounts', { name: 'Deals inc' }, 'account');
    const fromLead: string[] = [];
    const withAccount: string[] = [];
    for (let i = 0; i < 5; i++) {
      fromLead.push(await created('/deals', { name: `l${i}`, leadId: source }, 'deal'));
      withAccount.push(await created('/deals', { name: `a${i}`, accountId: account }, 'deal'));
      await created('/deals', { name: `n${i}` }, 'deal');
    }
    expect(await allPages(`/deals?leadId=${source}`, 'deals')).toEqual([...fromLead].reverse());
    expect(await allPages(`/deals?accountId=${account}&sort=createdAt`, 'deals', 3)).toEqual(withAccount);
    expect((await get(`/deals?leadId=${source}`, b)).body.data.deals).toEqual([]);
  });
});

describe('the organization\'s OpenAPI document', () => {
  it('types a relation as an id naming its target and a multi_select as an array of its options', async () => {
    const doc = (await call(t.app, 'GET', '/api/public/v1/openapi.json', { auth: a.auth })).body;
    const record = doc.components.schemas.Record_visits;
    expect(record.properties.lead.anyOf[0]).toMatchObject({ type: 'string', pattern: '^[0-9a-f]{24}$' });
    expect(record.properties.lead.anyOf[0].description).toContain('a lead (`leads`)');
    expect(record.properties.parent.anyOf[0].description).toContain('a record of visits');
    expect(record.properties.tags.anyOf[0]).toMatchObject({ type: 'array', uniqueItems: true, items: { type: 'string', enum: ['red', 'green', 'blue'] } });
    const params = doc.paths['/api/public/v1/objects/visits/records'].get.parameters as { name: string; schema: unknown; description: string }[];
    expect(params.find((p) => p.name === 'filter[tags]')).toMatchObject({ schema: { type: 'string', enum: ['red', 'green', 'blue'] } });
    expect(params.find((p) => p.name === 'filter[lead]')!.description).toContain('reverse lookup');
    const types = astToString(await openapiTS(doc));
    const recordType = /Record_visits: \{([\s\S]*?)\n {8}\};/.exec(types)?.[1] ?? '';
    expect(recordType).toMatch(/tags: \("red" \| "green" \| "blue"\)\[\] \| null;/);
    expect(recordType).toMatch(/lead: string \| null;/);
  });
});

describe('CSV import of records', () => {
  it('reads a multi_select cell as ;-separated options and a relation cell as the id, checked like the API', async () => {
    const target = await lead('Imported target');
    const dir = mkdtempSync(join(tmpdir(), 'crm-relations-'));
    try {
      const file = join(dir, 'visits.csv');
      writeFileSync(file, `title,tags,lead\nfirst,blue; red,${target}\nsecond,,\nbad,pink,0000000000000000deadbeef\n`);
      const report = await importCsv(t.ctx, { file, organizationId: a.orgId, adapter: await recordImportAdapter(t.ctx, a.orgId, 'visits'), allOrNothing: false });
      expect(report).toMatchObject({ rows: 3, imported: 2 });
      expect(report.failed.map((f) => [f.line, f.errors.map((e) => e.field)])).toEqual([[4, ['tags']]]);
      const found = (await get(`/objects/visits/records?filter[lead]=${target}`)).body.data.records;
      expect(found).toEqual([expect.objectContaining({ title: 'first', tags: ['red', 'blue'], lead: target })]);
      const missing = join(dir, 'missing.csv');
      writeFileSync(missing, 'title,lead\nghost,0000000000000000deadbeef\n');
      const refused = await importCsv(t.ctx, { file: missing, organizationId: a.orgId, adapter: await recordImportAdapter(t.ctx, a.orgId, 'visits'), allOrNothing: false });
      expect(refused.failed.map((f) => [f.line, f.errors.map((e) => `${e.field}:${e.code}`)])).toEqual([[2, ['lead:not_found']]]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('MCP record tools', () => {
  it('create a record with a relation and a multi_select, and find it by either filter', async () => {
    const client = await connect(httpTransport(await listen(t), a.key));
    try {
      const target = await lead('Through MCP');
      const { record } = await callOk(client, 'create_record', { object: 'visits', values: { title: 'mcp', lead: target, tags: ['green', 'red'] } });
      expect(record).toMatchObject({ lead: target, tags: ['red', 'green'] });
      const byLead = await callOk(client, 'search_records', { object: 'visits', [`filter[lead]`]: target });
      expect(byLead.records.map((r: { id: string }) => r.id)).toEqual([record.id]);
      const byTag = await callOk(client, 'search_records', { object: 'visits', 'filter[tags]': 'green', limit: 100 });
      expect(byTag.records.map((r: { id: string }) => r.id)).toContain(record.id);
      const { errors } = await callError(client, 'create_record', { object: 'visits', values: { title: 'x', lead: '0000000000000000deadbeef' } }, 'VALIDATION_FAILED');
      expect(errors).toEqual([expect.objectContaining({ field: 'values.lead', code: 'not_found' })]);
    } finally {
      await client.close();
    }
  });
});
