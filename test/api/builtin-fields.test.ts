import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../../src/modules/events/outbox.store.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call, expectError } from '../helpers/http.js';
import { MAX_FIELDS, MAX_STANDARD_FIELDS } from '../../src/modules/objects/objects.schemas.js';
import { BUILTIN, BUILTIN_RESOURCES } from '../../src/modules/fields/builtin-resources.js';

/*
 * Custom fields on leads, accounts and deals (contract §9): defined with PATCH /objects/{leads|accounts|deals},
 * values flat on the resource, validated, filterable, in events, trashed and purged with their item, found by
 * an erasure through their blind index. The bar: a lead's linkedinUrl (url) and visitDate (date).
 */

let t: TestApp;
let a: Seeded;
let b: Seeded;

const LEAD_FIELDS = [
  { key: 'linkedinUrl', label: 'LinkedIn URL', type: 'url' },
  { key: 'visitDate', label: 'Visit date', type: 'date' },
  { key: 'budget', label: 'Budget', type: 'number' },
  { key: 'tier', label: 'Tier', type: 'select', options: ['gold', 'silver'] },
  { key: 'privateEmail', label: 'Private e-mail', type: 'email' },
];

beforeAll(async () => {
  t = await buildTestApp();
  a = await seedOrg(t.ctx, { rateLimitPerMinute: 100_000 });
  b = await seedOrg(t.ctx);
  const res = await call(t.app, 'PATCH', '/objects/leads', { auth: a.auth, body: { fields: LEAD_FIELDS } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
});
afterAll(() => t.close());

const createLead = (body: Record<string, unknown>, who: Seeded = a) => call(t.app, 'POST', '/leads', { auth: who.auth, body });

describe('defining custom fields on built-in resources', () => {
  it('GET /objects lists leads, accounts and deals as built-in, standard fields read-only, custom fields after them', async () => {
    const res = await call(t.app, 'GET', '/objects', { auth: a.auth });
    expect(res.status).toBe(200);
    const objects = res.body.data.objects as { slug: string; builtIn: boolean; fields: { key: string; readOnly?: boolean }[] }[];
    expect(objects.slice(-3).map((o) => [o.slug, o.builtIn])).toEqual([['leads', true], ['accounts', true], ['deals', true]]);
    const leads = objects.at(-3)!;
    expect(leads.fields.find((f) => f.key === 'email')).toMatchObject({ readOnly: true });
    expect(leads.fields.filter((f) => !f.readOnly).map((f) => f.key)).toEqual(LEAD_FIELDS.map((f) => f.key));
    const other = await call(t.app, 'GET', '/objects/leads', { auth: b.auth });
    expect(other.body.data.object.fields.filter((f: { readOnly?: boolean }) => !f.readOnly)).toEqual([]);
  });

  it('types each standard field as what a client sends there: e-mail, phone, URL, a deal\'s close day, the server\'s instants', async () => {
    const typed = async (slug: string) =>
      Object.fromEntries(((await call(t.app, 'GET', `/objects/${slug}`, { auth: b.auth })).body.data.object.fields as { key: string; type: string }[]).map((f) => [f.key, f.type]));
    expect(await typed('leads')).toMatchObject({ name: 'text', email: 'email', phoneNumber: 'phone', createdAt: 'datetime', deletedAt: 'datetime' });
    expect(await typed('accounts')).toMatchObject({ email: 'email', phoneNumber: 'phone', website: 'url', domain: 'text' });
    expect(await typed('deals')).toMatchObject({ expectedCloseDate: 'date', amount: 'text', updatedAt: 'datetime' });
  });

  it('shows an enumeration as a select with its options, and a reference to another item as a relation to its kind', async () => {
    const fields = async (slug: string) =>
      Object.fromEntries(((await call(t.app, 'GET', `/objects/${slug}`, { auth: b.auth })).body.data.object.fields as { key: string }[]).map((f) => [f.key, f]));
    const leads = await fields('leads');
    expect(leads.status).toMatchObject({ type: 'select', options: ['NEW', 'CONTACTED', 'QUALIFIED', 'UNQUALIFIED', 'CONVERTED'] });
    expect(leads.source).toMatchObject({ type: 'select', options: expect.arrayContaining(['WEBSITE', 'REFERRAL', 'OTHER']) });
    expect(leads.accountId).toMatchObject({ type: 'relation', target: 'accounts' });
    expect(leads.duplicateOf).toMatchObject({ type: 'relation', target: 'leads' });
    const deals = await fields('deals');
    expect(deals.accountId).toMatchObject({ type: 'relation', target: 'accounts' });
    expect(deals.leadId).toMatchObject({ type: 'relation', target: 'leads' });
    expect(leads.name).not.toHaveProperty('options');
    expect(leads.name).not.toHaveProperty('target');
  });

  it('refuses a key of a standard field, a prototype name, a due role, stages, and a new slug named like a built-in', async () => {
    for (const key of ['email', 'name', 'externalId', 'ownerId', 'createdAt']) {
      const res = await call(t.app, 'PATCH', '/objects/leads', { auth: a.auth, body: { fields: [{ key, label: 'X', type: 'text' }] } });
      expectError(res, 400, 'VALIDATION_FAILED');
      expect(res.body.errors[0]).toMatchObject({ field: 'fields.0.key', code: 'reserved' });
    }
    expectError(await call(t.app, 'PATCH', '/objects/deals', { auth: a.auth, body: { fields: [{ key: 'amount', label: 'A', type: 'number' }] } }), 400, 'VALIDATION_FAILED');
    expectError(await call(t.app, 'PATCH', '/objects/accounts', { auth: a.auth, body: { fields: [{ key: 'constructor', label: 'C', type: 'text' }] } }), 400, 'VALIDATION_FAILED');
    expectError(await call(t.app, 'PATCH', '/objects/accounts', { auth: a.auth, body: { fields: [{ key: 'dueOn', label: 'D', type: 'date', role: 'due' }] } }), 400, 'VALIDATION_FAILED');
    expectError(await call(t.app, 'PATCH', '/objects/accounts', { auth: a.auth, body: { stages: [{ key: 'x', label: 'X' }] } }), 400, 'VALIDATION_FAILED');
    for (const slug of ['leads', 'accounts', 'deals']) {
      expectError(await call(t.app, 'POST', '/objects', { auth: a.auth, body: { slug, name: slug } }), 409, 'CONFLICT');
    }
  });

  it('needs objects:admin to change them', async () => {
    const reader = await seedOrg(t.ctx, { scopes: ['records:read', 'leads:write'] });
    expectError(await call(t.app, 'PATCH', '/objects/leads', { auth: reader.auth, body: { fields: [] } }), 403, 'INSUFFICIENT_SCOPE');
  });
});

describe('a definition read, edited and sent back (GET then PATCH /objects/{leads|accounts|deals})', () => {
  type Shown = { key: string; label: string; type: string; required: boolean; readOnly?: true };
  const read = async (who: Seeded, slug: string) => {
    const res = await call(t.app, 'GET', `/objects/${slug}`, { auth: who.auth });
    expect(res.status).toBe(200);
    return { object: res.body.data.object as { fields: Shown[]; updatedAt: string }, etag: res.headers.etag as string };
  };
  const patch = (who: Seeded, slug: string, fields: unknown[], headers?: Record<string, string>) => call(t.app, 'PATCH', `/objects/${slug}`, { auth: who.auth, body: { fields }, headers });

  it('takes the standard fields back unchanged and ignores them: nothing changes, updatedAt and ETag stay', async () => {
    const c = await seedOrg(t.ctx);
    for (const slug of ['leads', 'accounts', 'deals']) {
      expect((await patch(c, slug, [{ key: 'region', label: 'Region', type: 'text' }])).status).toBe(200);
      const before = await read(c, slug);
      const res = await patch(c, slug, before.object.fields, { 'if-match': before.etag });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data.object).toEqual(before.object);
      expect(res.headers.etag).toBe(before.etag);
      expect((await read(c, slug)).object).toEqual(before.object);
    }
  });

  it('adds a custom field sent with the standard ones, wherever they stand in the list', async () => {
    const c = await seedOrg(t.ctx);
    for (const slug of ['leads', 'accounts', 'deals']) {
      const { fields } = (await read(c, slug)).object;
      const added = { key: 'tier', label: 'Tier', type: 'select', options: ['gold', 'silver'] };
      const res = await patch(c, slug, [...fields, added]);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data.object.fields).toEqual([...fields, { ...added, required: false }]);
      const reordered = await patch(c, slug, [added, ...fields]);
      expect(reordered.status).toBe(200);
      expect(reordered.body.data.object.fields.filter((f: Shown) => !f.readOnly).map((f: Shown) => f.key)).toEqual(['tier']);
    }
    const { fields } = (await read(c, 'accounts')).object;
    const keyed = expectError(await patch(c, 'accounts', [...fields, { key: 'name', label: 'X', type: 'text' }]), 400, 'VALIDATION_FAILED');
    expect(keyed).toEqual([expect.objectContaining({ field: `fields.${fields.length}.key`, code: 'reserved' })]);
  });

  it('refuses a changed standard field, naming it; leaving them out still works', async () => {
    const c = await seedOrg(t.ctx);
    const { object, etag } = await read(c, 'accounts');
    const at = object.fields.findIndex((f) => f.key === 'name');
    for (const change of [{ label: 'Company' }, { type: 'number' }, { required: false }, { options: ['x'] }]) {
      const fields = object.fields.map((f, i) => (i === at ? { ...f, ...change } : f));
      const errors = expectError(await patch(c, 'accounts', fields), 400, 'VALIDATION_FAILED');
      expect(errors).toEqual([{ field: `fields.${at}`, code: 'read_only', message: '"name" is a standard field of accounts; it can\'t be changed' }]);
    }
    const custom = expectError(await patch(c, 'accounts', [{ key: 'region', label: 'Region', type: 'text', readOnly: true }]), 400, 'VALIDATION_FAILED');
    expect(custom).toEqual([expect.objectContaining({ field: 'fields.0.readOnly', code: 'read_only' })]);
    expect((await read(c, 'accounts')).etag).toBe(etag);
    expect((await patch(c, 'accounts', [object.fields[0]!])).status).toBe(200);
    expect((await patch(c, 'accounts', [])).status).toBe(200);
  });

  it('takes back a definition with the most custom fields, standard fields included; one custom field more is refused', async () => {
    const c = await seedOrg(t.ctx);
    const custom = (n: number) => Array.from({ length: n }, (_, i) => ({ key: `f${i}`, label: `F${i}`, type: 'text' }));
    expect((await patch(c, 'leads', custom(MAX_FIELDS))).status).toBe(200);
    const { object, etag } = await read(c, 'leads');
    expect(object.fields.filter((f) => f.readOnly)).toHaveLength(MAX_STANDARD_FIELDS);
    const back = await patch(c, 'leads', object.fields, { 'if-match': etag });
    expect(back.status, JSON.stringify(back.body)).toBe(200);
    expect(back.headers.etag).toBe(etag);
    const over = expectError(await patch(c, 'leads', custom(MAX_FIELDS + 1)), 400, 'VALIDATION_FAILED');
    expect(over).toEqual([{ field: 'fields', code: 'too_long', message: `must have at most ${MAX_FIELDS} custom fields` }]);
    const object2 = await call(t.app, 'POST', '/objects', { auth: c.auth, body: { slug: 'visits', name: 'Visits', fields: custom(MAX_FIELDS) } });
    expect(object2.status, JSON.stringify(object2.body)).toBe(201);
    const tooMany = expectError(await patch(c, 'visits', custom(MAX_FIELDS + 1)), 400, 'VALIDATION_FAILED');
    expect(tooMany).toEqual([expect.objectContaining({ field: 'fields', code: 'too_long' })]);
  });

  it('MAX_STANDARD_FIELDS is the most standard fields a built-in has', () => {
    expect(MAX_STANDARD_FIELDS).toBe(Math.max(...BUILTIN_RESOURCES.map((r) => BUILTIN[r].fields.length)));
  });
});

describe('custom values on leads', () => {
  let leadId: string;

  it('are written, validated, read back flat and shown in lists', async () => {
    const res = await createLead({ name: 'Ada', email: 'ada@example.com', linkedinUrl: 'https://www.linkedin.com/in/ada', visitDate: '2026-03-04', budget: 5000, tier: 'gold', privateEmail: 'Ada@Home.example' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const lead = res.body.data.lead;
    leadId = lead.id;
    expect(lead).toMatchObject({ name: 'Ada', linkedinUrl: 'https://www.linkedin.com/in/ada', visitDate: '2026-03-04T00:00:00.000Z', budget: 5000, tier: 'gold', privateEmail: 'ada@home.example' });
    const got = await call(t.app, 'GET', `/leads/${leadId}`, { auth: a.auth });
    expect(got.body.data.lead).toMatchObject({ linkedinUrl: 'https://www.linkedin.com/in/ada', visitDate: '2026-03-04T00:00:00.000Z', privateEmail: 'ada@home.example' });
    const bare = await createLead({ name: 'Bare' });
    expect(bare.body.data.lead).toMatchObject({ linkedinUrl: null, visitDate: null, budget: null, tier: null, privateEmail: null });
    const list = await call(t.app, 'GET', '/leads?limit=100', { auth: a.auth });
    expect(list.body.data.leads.find((l: { id: string }) => l.id === leadId)).toMatchObject({ visitDate: '2026-03-04T00:00:00.000Z', tier: 'gold' });
  });

  it('refuses bad values, unknown keys and read-only keys with every problem named; another organization has no such fields', async () => {
    const res = await createLead({ name: 'Bad', linkedinUrl: 'not a url', visitDate: '2026-02-30', budget: 'lots', tier: 'bronze', favouriteColour: 'red', duplicateOf: 'x' });
    expectError(res, 400, 'VALIDATION_FAILED');
    expect(res.body.errors.map((d: { field: string; code: string }) => `${d.field}:${d.code}`).sort()).toEqual(
      ['budget:invalid_type', 'duplicateOf:read_only', 'favouriteColour:unknown_field', 'linkedinUrl:invalid_format', 'tier:invalid_value', 'visitDate:invalid_date'].sort(),
    );
    expectError(await createLead({ name: 'Other', linkedinUrl: 'https://example.com' }, b), 400, 'VALIDATION_FAILED');
  });

  it('are changed by PATCH, each change in lead.updated; e-mails show as [encrypted] in events', async () => {
    const res = await call(t.app, 'PATCH', `/leads/${leadId}`, { auth: a.auth, body: { visitDate: '2026-04-01', tier: null, privateEmail: 'ada@work.example' } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.lead).toMatchObject({ visitDate: '2026-04-01T00:00:00.000Z', tier: null, budget: 5000, privateEmail: 'ada@work.example' });
    const events = await listEvents(t.ctx.database.db, a.orgId, { objectId: leadId });
    expect(events.map((e) => e.type)).toEqual(['lead.created', 'lead.updated']);
    expect(events[0]!.data.changes.after).toMatchObject({ linkedinUrl: 'https://www.linkedin.com/in/ada', visitDate: '2026-03-04T00:00:00.000Z', privateEmail: '[encrypted]' });
    expect(events[1]!.data.changes).toEqual({
      before: { visitDate: '2026-03-04T00:00:00.000Z', tier: 'gold', privateEmail: '[encrypted]' },
      after: { visitDate: '2026-04-01T00:00:00.000Z', tier: null, privateEmail: '[encrypted]' },
    });
    expect(JSON.stringify(events)).not.toContain('ada@work.example');
  });

  it('keeps e-mail values encrypted at rest', async () => {
    const row = await t.ctx.database.db.selectFrom('leads').select('custom').where('id', '=', leadId).executeTakeFirstOrThrow();
    expect(row.custom).toContain('visitDate');
    expect(row.custom).not.toContain('ada@work.example');
  });

  it('are filtered with filter[field] (equality, ranges, e-mails by blind index); unknown fields are 400', async () => {
    const more = [
      { name: 'F1', visitDate: '2026-05-01', budget: 100, tier: 'silver' },
      { name: 'F2', visitDate: '2026-06-01', budget: 900, linkedinUrl: 'https://linkedin.com/in/f2' },
    ];
    const ids: string[] = [];
    for (const body of more) ids.push((await createLead(body)).body.data.lead.id);
    await createLead({ name: 'B', visitDate: '2026-05-01', budget: 100 }, b);
    const found = async (qs: string) => {
      const res = await call(t.app, 'GET', `/leads?${qs}`, { auth: a.auth });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return (res.body.data.leads as { id: string }[]).map((l) => l.id).sort();
    };
    expect(await found('filter[visitDate]=2026-05-01')).toEqual([ids[0]]);
    expect(await found('filter[visitDate][gte]=2026-04-01&filter[visitDate][lt]=2026-06-01')).toEqual([leadId, ids[0]].sort());
    expect(await found('filter[budget][gt]=500')).toEqual([leadId, ids[1]].sort());
    expect(await found('filter[tier]=silver')).toEqual([ids[0]]);
    expect(await found(`filter[privateEmail]=${encodeURIComponent('ADA@work.example')}`)).toEqual([leadId]);
    expect(await found('filter[privateEmail]=ada@home.example')).toEqual([]);
    expect(await found('filter[budget]=100&status=NEW')).toEqual([ids[0]]);
    const bad = await call(t.app, 'GET', '/leads?filter[nope]=1&filter[tier]=bronze&filter[tier][gte]=a', { auth: a.auth });
    expectError(bad, 400, 'VALIDATION_FAILED');
    expect(bad.body.errors.map((d: { code: string }) => d.code).sort()).toEqual(['invalid_operator', 'invalid_value', 'unknown_field']);
  });

  it('enforces required fields (own properties only) once every lead has a value, and refuses to remove a field with data', async () => {
    const removing = await call(t.app, 'PATCH', '/objects/leads', { auth: a.auth, body: { fields: LEAD_FIELDS.filter((f) => f.key !== 'visitDate') } });
    expectError(removing, 400, 'VALIDATION_FAILED');
    const requiring = await call(t.app, 'PATCH', '/objects/leads', { auth: a.auth, body: { fields: LEAD_FIELDS.map((f) => (f.key === 'linkedinUrl' ? { ...f, required: true } : f)) } });
    expectError(requiring, 400, 'VALIDATION_FAILED');
    const c = await seedOrg(t.ctx);
    expect((await call(t.app, 'PATCH', '/objects/leads', { auth: c.auth, body: { fields: [{ key: 'region', label: 'Region', type: 'text', required: true }] } })).status).toBe(200);
    const missing = await createLead({ name: 'No region' }, c);
    expectError(missing, 400, 'VALIDATION_FAILED');
    expect(missing.body.errors).toEqual([expect.objectContaining({ field: 'region', code: 'required' })]);
    expect((await createLead({ name: 'With region', region: 'EMEA' }, c)).status).toBe(201);
    // A field nobody uses may go.
    expect((await call(t.app, 'PATCH', '/objects/leads', { auth: c.auth, body: { fields: [] } })).status).toBe(400);
    expect((await call(t.app, 'PATCH', '/objects/deals', { auth: c.auth, body: { fields: [{ key: 'lostReason', label: 'Lost', type: 'text' }] } })).status).toBe(200);
    expect((await call(t.app, 'PATCH', '/objects/deals', { auth: c.auth, body: { fields: [] } })).status).toBe(200);
  });
});

describe("the organization's OpenAPI document", () => {
  it('types the custom lead fields on Lead, its bodies and its list filters; another organization sees none', async () => {
    const doc = (await call(t.app, 'GET', '/api/public/v1/openapi.json', { auth: a.auth })).body;
    const lead = doc.components.schemas.Lead;
    expect(lead.properties.linkedinUrl).toEqual({ anyOf: [expect.objectContaining({ type: 'string', format: 'uri' }), { type: 'null' }] });
    expect(lead.properties.visitDate.anyOf[0]).toMatchObject({ type: 'string', format: 'date-time' });
    expect(lead.additionalProperties).toBe(false);
    const create = doc.paths['/api/public/v1/leads'].post.requestBody.content['application/json'].schema;
    expect(create.properties.visitDate.anyOf[0]).toMatchObject({ type: 'string', examples: ['2026-11-21'] });
    expect(create.additionalProperties).toBe(false);
    // The batches' items too: a client generated from the document sends the same fields in bulk.
    const batch = doc.paths['/api/public/v1/leads/batch'];
    for (const [method, keys] of [['post', ['ifMatch']], ['patch', ['id', 'ifMatch']]] as const) {
      const item = batch[method].requestBody.content['application/json'].schema.properties.items.items;
      expect(item.properties.visitDate.anyOf[0], method).toMatchObject({ type: 'string', examples: ['2026-11-21'] });
      expect(Object.keys(item.properties), method).toEqual(expect.arrayContaining([...keys, 'name', 'tier']));
      expect(item.additionalProperties, method).toBe(false);
    }
    const params = doc.paths['/api/public/v1/leads'].get.parameters.map((p: { name: string }) => p.name);
    expect(params).toEqual(expect.arrayContaining(['filter[visitDate]', 'filter[visitDate][gte]', 'filter[tier]', 'filter[privateEmail]']));
    expect(params).not.toContain('filter[linkedinUrl]');
    const other = (await call(t.app, 'GET', '/api/public/v1/openapi.json', { auth: b.auth })).body;
    expect(other.components.schemas.Lead.properties.linkedinUrl).toBeUndefined();
  });
});

describe('custom values on accounts and deals', () => {
  it('work the same way through create, PATCH, filter and batch', async () => {
    expect((await call(t.app, 'PATCH', '/objects/accounts', { auth: a.auth, body: { fields: [{ key: 'employees', label: 'Employees', type: 'number' }, { key: 'billingPhone', label: 'Billing phone', type: 'phone' }] } })).status).toBe(200);
    expect((await call(t.app, 'PATCH', '/objects/deals', { auth: a.auth, body: { fields: [{ key: 'lossReason', label: 'Loss reason', type: 'select', options: ['price', 'timing'] }] } })).status).toBe(200);
    const account = await call(t.app, 'POST', '/accounts', { auth: a.auth, body: { name: 'Acme', employees: 40, billingPhone: '+1 415 555 0199' } });
    expect(account.status, JSON.stringify(account.body)).toBe(201);
    expect(account.body.data.account).toMatchObject({ employees: 40, billingPhone: '+14155550199' });
    const deal = await call(t.app, 'POST', '/deals', { auth: a.auth, body: { name: 'Big one', lossReason: 'price' } });
    expect(deal.status, JSON.stringify(deal.body)).toBe(201);
    const patched = await call(t.app, 'PATCH', `/deals/${deal.body.data.deal.id}`, { auth: a.auth, body: { lossReason: 'timing' } });
    expect(patched.body.data.deal).toMatchObject({ lossReason: 'timing' });
    const byField = await call(t.app, 'GET', '/deals?filter[lossReason]=timing', { auth: a.auth });
    expect(byField.body.data.deals.map((d: { id: string }) => d.id)).toEqual([deal.body.data.deal.id]);
    const byPhone = await call(t.app, 'GET', `/accounts?filter[billingPhone]=${encodeURIComponent('+14155550199')}`, { auth: a.auth });
    expect(byPhone.body.data.accounts.map((x: { id: string }) => x.id)).toEqual([account.body.data.account.id]);
    const batch = await call(t.app, 'POST', '/deals/batch', { auth: a.auth, body: { items: [{ name: 'B1', lossReason: 'price' }, { name: 'B2', lossReason: 'nope' }] } });
    expect(batch.status).toBe(200);
    expect(batch.body.data.results.map((r: { status: number }) => r.status)).toEqual([201, 400]);
    const leads = await call(t.app, 'POST', '/leads/batch', { auth: a.auth, body: { items: [{ name: 'L1', budget: 1 }, { name: 'L2', budget: 'x' }] } });
    expect(leads.body.data.results.map((r: { status: number }) => r.status)).toEqual([201, 400]);
    expect(leads.body.data.results[0].lead).toMatchObject({ budget: 1 });
  });
});

describe('trash, purge and erasure', () => {
  it('keep values through trash and restore, and remove them with a purge', async () => {
    const lead = (await createLead({ name: 'Trashy', budget: 77777 })).body.data.lead;
    const find = async () => (await call(t.app, 'GET', '/leads?filter[budget]=77777', { auth: a.auth })).body.data.leads.map((l: { id: string }) => l.id);
    expect((await call(t.app, 'DELETE', `/leads/${lead.id}`, { auth: a.auth })).status).toBe(200);
    expect(await find()).toEqual([]);
    expect((await call(t.app, 'POST', `/leads/${lead.id}/restore`, { auth: a.auth })).body.data.lead).toMatchObject({ budget: 77777 });
    expect(await find()).toEqual([lead.id]);
    expect((await call(t.app, 'DELETE', `/leads/${lead.id}?permanent=true`, { auth: a.auth })).status).toBe(200);
    const left = await t.ctx.database.db.selectFrom('item_values').select('item_id').where('item_id', '=', lead.id).execute();
    expect(left).toEqual([]);
  });

  it('an export shows the custom values of the leads it finds, decrypted, as GET does; never their sealed form', async () => {
    const lead = (await createLead({ name: 'Exported', privateEmail: 'exported@private.example', tier: 'silver' })).body.data.lead;
    const res = await call(t.app, 'GET', '/privacy/subject?email=exported@private.example', { auth: a.auth });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.leads).toEqual([(await call(t.app, 'GET', `/leads/${lead.id}`, { auth: a.auth })).body.data.lead]);
    expect(res.body.data.leads[0]).toMatchObject({ privateEmail: 'exported@private.example', tier: 'silver' });
    expect(res.body.data.leads[0]).not.toHaveProperty('custom');
  });

  it('an erasure finds leads through a custom e-mail field and removes their values', async () => {
    const lead = (await createLead({ name: 'Subject', privateEmail: 'subject@private.example' })).body.data.lead;
    const res = await call(t.app, 'POST', '/privacy/erasures', { auth: a.auth, body: { email: 'subject@private.example' } });
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
    expectError(await call(t.app, 'GET', `/leads/${lead.id}`, { auth: a.auth }), 404, 'NOT_FOUND');
    const left = await t.ctx.database.db.selectFrom('item_values').select('item_id').where('item_id', '=', lead.id).execute();
    expect(left).toEqual([]);
  });
});

describe('relation and multi_select fields on built-ins', () => {
  it('a lead relation to an account takes a live account of the organization only, and is filtered by id', async () => {
    const c = await seedOrg(t.ctx, { rateLimitPerMinute: 100_000 });
    const badTarget = await call(t.app, 'PATCH', '/objects/leads', { auth: c.auth, body: { fields: [{ key: 'partner', label: 'Partner', type: 'relation', target: 'nothing' }] } });
    expectError(badTarget, 400, 'VALIDATION_FAILED');
    expect(badTarget.body.errors[0]).toMatchObject({ field: 'fields.0.target', code: 'not_found' });
    expect((await call(t.app, 'PATCH', '/objects/leads', { auth: c.auth, body: { fields: [{ key: 'partner', label: 'Partner', type: 'relation', target: 'accounts' }] } })).status).toBe(200);
    const account = (await call(t.app, 'POST', '/accounts', { auth: c.auth, body: { name: 'Live' } })).body.data.account;
    const trashed = (await call(t.app, 'POST', '/accounts', { auth: c.auth, body: { name: 'Trashed' } })).body.data.account;
    expect((await call(t.app, 'DELETE', `/accounts/${trashed.id}`, { auth: c.auth })).status).toBe(200);
    const foreign = (await call(t.app, 'POST', '/accounts', { auth: b.auth, body: { name: 'Other org' } })).body.data.account;
    const lead = await call(t.app, 'POST', '/leads', { auth: c.auth, body: { name: 'Linked', partner: account.id } });
    expect(lead.status, JSON.stringify(lead.body)).toBe(201);
    expect(lead.body.data.lead).toMatchObject({ partner: account.id });
    for (const id of [trashed.id, foreign.id, '0123456789abcdef01234567']) {
      const refused = await call(t.app, 'POST', '/leads', { auth: c.auth, body: { name: 'Dangling', partner: id } });
      expectError(refused, 400, 'VALIDATION_FAILED');
      expect(refused.body.errors).toEqual([expect.objectContaining({ field: 'partner', code: 'not_found' })]);
      expect(JSON.stringify(refused.body)).not.toContain(id);
      expectError(await call(t.app, 'PATCH', `/leads/${lead.body.data.lead.id}`, { auth: c.auth, body: { partner: id } }), 400, 'VALIDATION_FAILED');
    }
    const batch = await call(t.app, 'POST', '/leads/batch', { auth: c.auth, body: { items: [{ name: 'B1', partner: account.id }, { name: 'B2', partner: trashed.id }] } });
    expect(batch.body.data.results.map((r: { status: number }) => r.status)).toEqual([201, 400]);
    const found = await call(t.app, 'GET', `/leads?filter[partner]=${account.id}`, { auth: c.auth });
    expect(found.body.data.leads.map((l: { name: string }) => l.name).sort()).toEqual(['B1', 'Linked']);
    // The trashed account's id stays wherever it was stored before; a write that leaves the field alone passes.
    expect((await call(t.app, 'PATCH', `/leads/${lead.body.data.lead.id}`, { auth: c.auth, body: { title: 'CEO' } })).status).toBe(200);
    expect((await call(t.app, 'PATCH', '/objects/deals', { auth: c.auth, body: { fields: [{ key: 'contact', label: 'Contact', type: 'relation', target: 'leads' }] } })).status).toBe(200);
    expect((await call(t.app, 'POST', '/deals', { auth: c.auth, body: { name: 'D', contact: lead.body.data.lead.id } })).status).toBe(201);
    expectError(await call(t.app, 'POST', '/deals', { auth: c.auth, body: { name: 'D', contact: account.id } }), 400, 'VALIDATION_FAILED');
  });

  it('multi_select values are written, filtered by option, required, and their options kept while in use', async () => {
    const c = await seedOrg(t.ctx, { rateLimitPerMinute: 100_000 });
    const field = { key: 'channels', label: 'Channels', type: 'multi_select', options: ['email', 'phone', 'fax'] };
    expect((await call(t.app, 'PATCH', '/objects/accounts', { auth: c.auth, body: { fields: [field] } })).status).toBe(200);
    const both = await call(t.app, 'POST', '/accounts', { auth: c.auth, body: { name: 'Both', channels: ['email', 'phone'] } });
    expect(both.status, JSON.stringify(both.body)).toBe(201);
    expect(both.body.data.account).toMatchObject({ channels: ['email', 'phone'] });
    const one = (await call(t.app, 'POST', '/accounts', { auth: c.auth, body: { name: 'One', channels: ['phone'] } })).body.data.account;
    expectError(await call(t.app, 'POST', '/accounts', { auth: c.auth, body: { name: 'Bad', channels: ['pigeon'] } }), 400, 'VALIDATION_FAILED');
    const names = async (option: string) => (await call(t.app, 'GET', `/accounts?filter[channels]=${option}`, { auth: c.auth })).body.data.accounts.map((x: { name: string }) => x.name).sort();
    expect(await names('phone')).toEqual(['Both', 'One']);
    expect(await names('email')).toEqual(['Both']);
    expect((await call(t.app, 'PATCH', `/accounts/${one.id}`, { auth: c.auth, body: { channels: ['email'] } })).status).toBe(200);
    expect(await names('phone')).toEqual(['Both']);
    const dropPhone = await call(t.app, 'PATCH', '/objects/accounts', { auth: c.auth, body: { fields: [{ ...field, options: ['email', 'fax'] }] } });
    expectError(dropPhone, 400, 'VALIDATION_FAILED');
    expect(dropPhone.body.errors[0]).toMatchObject({ field: 'fields.0.options', code: 'in_use' });
    expect((await call(t.app, 'PATCH', '/objects/accounts', { auth: c.auth, body: { fields: [{ ...field, options: ['email', 'phone'], required: true }] } })).status).toBe(200);
    const missing = await call(t.app, 'POST', '/accounts', { auth: c.auth, body: { name: 'None' } });
    expectError(missing, 400, 'VALIDATION_FAILED');
    expect(missing.body.errors).toEqual([expect.objectContaining({ field: 'channels', code: 'required' })]);
  });

  it('a lead multi_select reads back in the options\' current order; the same set in another order changes nothing', async () => {
    const c = await seedOrg(t.ctx, { rateLimitPerMinute: 100_000 });
    const field = { key: 'picks', label: 'Picks', type: 'multi_select', options: ['a', 'b', 'c'] };
    const define = (options: string[]) => call(t.app, 'PATCH', '/objects/leads', { auth: c.auth, body: { fields: [{ ...field, options }] } });
    expect((await define(['a', 'b', 'c'])).status).toBe(200);
    const lead = (await call(t.app, 'POST', '/leads', { auth: c.auth, body: { name: 'Picky', picks: ['c', 'a'] } })).body.data.lead;
    expect(lead.picks).toEqual(['a', 'c']);
    expect((await define(['c', 'b', 'a'])).status).toBe(200);
    // Written before the reorder, read in the current order: one item, its list, a batch result.
    expect((await call(t.app, 'GET', `/leads/${lead.id}`, { auth: c.auth })).body.data.lead.picks).toEqual(['c', 'a']);
    expect((await call(t.app, 'GET', '/leads', { auth: c.auth })).body.data.leads[0].picks).toEqual(['c', 'a']);
    const batch = await call(t.app, 'PATCH', '/leads/batch', { auth: c.auth, body: { items: [{ id: lead.id, title: 'Buyer' }] } });
    expect(batch.body.data.results[0].lead.picks, JSON.stringify(batch.body)).toEqual(['c', 'a']);
    const events = await listEvents(t.ctx.database.db, c.orgId, { objectId: lead.id });
    const updatedAt = batch.body.data.results[0].lead.updatedAt;
    for (const picks of [['a', 'c'], ['c', 'a']]) {
      const same = await call(t.app, 'PATCH', `/leads/${lead.id}`, { auth: c.auth, body: { picks } });
      expect(same.body.data.lead).toMatchObject({ picks: ['c', 'a'], updatedAt });
    }
    expect(await listEvents(t.ctx.database.db, c.orgId, { objectId: lead.id })).toHaveLength(events.length);
    expect((await call(t.app, 'PATCH', `/leads/${lead.id}`, { auth: c.auth, body: { picks: ['a', 'b', 'c'] } })).body.data.lead.picks).toEqual(['c', 'b', 'a']);
    const [updated] = (await listEvents(t.ctx.database.db, c.orgId, { objectId: lead.id })).slice(events.length);
    expect(updated).toMatchObject({ type: 'lead.updated', data: { changes: { before: { picks: ['c', 'a'] }, after: { picks: ['c', 'b', 'a'] } } } });
  });
});
