import { createClient, etagOf, isWhole } from '@crm/sdk';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Scope } from '../../src/modules/orgs/principal.js';
import { call, expectError } from '../helpers/http.js';
import { callOk, connect, httpTransport, listen } from '../helpers/mcp.js';
import { addKey, seedOrg, type Seeded } from '../helpers/seed.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { inTransaction } from '../../src/db/transaction.js';
import { createWebhook } from '../../src/modules/webhooks/webhooks.service.js';

// Contract §2, `*:write` does not imply `*:read`: a key that may write an item but not read it learns nothing
// stored about an item that existed before its write — only its minimal view — while a create answers the new
// item whole, and a key that may read gets every item whole.

const MINIMAL = ['deletedAt', 'id', 'updatedAt'];
const RECORD_MINIMAL = ['deletedAt', 'id', 'objectSlug', 'updatedAt'];
const fieldsOf = (item: Record<string, unknown>) => Object.keys(item).sort();

let t: TestApp;
let a: Seeded;
let n = 0;
const keyWith = async (scopes: Scope[]) => (await addKey(t.ctx, a.orgId, scopes)).auth;

beforeAll(async () => {
  t = await buildTestApp();
  a = await seedOrg(t.ctx);
  const object = { slug: 'parcels', name: 'Parcels', fields: [{ key: 'title', label: 'Title', type: 'text' }, { key: 'recipient', label: 'Recipient', type: 'email' }] };
  expect((await call(t.app, 'POST', '/objects', { auth: a.auth, body: object })).status).toBe(201);
});
afterAll(() => t.close());

/** A lead only the full key wrote: what a write-only key must not learn. */
async function victimLead() {
  n += 1;
  const body = { name: 'Victor Victim', email: `victim${n}@example.com`, phoneNumber: '+14155550123', company: 'Victim Corp', notes: 'Prefers calls after 5pm', externalId: `victim-${n}` };
  const res = await call(t.app, 'POST', '/leads', { auth: a.auth, body });
  expect(res.status).toBe(201);
  return res.body.data.lead as { id: string; email: string; externalId: string; updatedAt: string };
}

describe('leads with leads:write only', () => {
  let writer: Record<string, string>;
  beforeAll(async () => {
    writer = await keyWith(['leads:write']);
  });

  it('an upsert by e-mail that hits an existing lead answers its minimal view; a created item whole', async () => {
    const victim = await victimLead();
    expectError(await call(t.app, 'GET', `/leads?q=${victim.email}`, { auth: writer }), 403, 'INSUFFICIENT_SCOPE');
    const items = [{ name: 'probe', email: victim.email }, { name: 'Fresh Lead', email: `fresh${n}@example.com`, company: 'Mine' }];
    const res = await call(t.app, 'POST', '/leads/batch', { auth: writer, body: { upsertBy: 'email', items } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const [hit, created] = res.body.data.results;
    expect(hit.status).toBe(200);
    expect(fieldsOf(hit.lead)).toEqual(MINIMAL);
    expect(hit.lead.id).toBe(victim.id);
    expect(JSON.stringify(res.body)).not.toMatch(/victim|Victim|4155550123|5pm/);
    expect(created).toMatchObject({ status: 201, lead: { name: 'Fresh Lead', company: 'Mine' } });
  });

  it('an upsert by externalId that hits answers the minimal view', async () => {
    const victim = await victimLead();
    const res = await call(t.app, 'POST', '/leads/batch', { auth: writer, body: { upsertBy: 'externalId', items: [{ name: 'probe', externalId: victim.externalId }] } });
    expect(res.body.data.results[0].status).toBe(200);
    expect(res.body.data.results[0].lead).toEqual({ id: victim.id, updatedAt: expect.any(String), deletedAt: null });
  });

  it("PATCH answers the minimal view with the full lead's ETag, which If-Match then takes", async () => {
    const victim = await victimLead();
    const res = await call(t.app, 'PATCH', `/leads/${victim.id}`, { auth: writer, body: { status: 'CONTACTED' } });
    expect(res.status).toBe(200);
    expect(res.body.data.lead).toEqual({ id: victim.id, updatedAt: expect.any(String), deletedAt: null });
    const read = await call(t.app, 'GET', `/leads/${victim.id}`, { auth: a.auth });
    expect(res.headers.etag).toBe(read.headers.etag);
    const again = await call(t.app, 'PATCH', `/leads/${victim.id}`, { auth: writer, body: { status: 'QUALIFIED' }, headers: { 'if-match': String(res.headers.etag) } });
    expect(again.status).toBe(200);
  });

  it('a 412 shows the minimal view of the current lead', async () => {
    const victim = await victimLead();
    const res = await call(t.app, 'PATCH', `/leads/${victim.id}`, { auth: writer, body: { status: 'CONTACTED' }, headers: { 'if-match': '"stale"' } });
    expectError(res, 412, 'PRECONDITION_FAILED');
    expect(res.body.data.lead).toEqual({ id: victim.id, updatedAt: victim.updatedAt, deletedAt: null });
    expect(res.headers.etag).toBe((await call(t.app, 'GET', `/leads/${victim.id}`, { auth: a.auth })).headers.etag);
  });

  it('PATCH /leads/batch answers minimal views, on 200 and on 412', async () => {
    const [one, two] = [await victimLead(), await victimLead()];
    const items = [{ id: one.id, status: 'CONTACTED' }, { id: two.id, ifMatch: '"stale"', status: 'CONTACTED' }];
    const res = await call(t.app, 'PATCH', '/leads/batch', { auth: writer, body: { items } });
    expect(res.body.data.results.map((r: { status: number }) => r.status)).toEqual([200, 412]);
    for (const r of res.body.data.results) expect(fieldsOf(r.lead)).toEqual(MINIMAL);
  });

  it('DELETE and restore answer the minimal view, deletedAt telling the outcome', async () => {
    const victim = await victimLead();
    const deleted = await call(t.app, 'DELETE', `/leads/${victim.id}`, { auth: writer });
    expect(deleted.body.data.lead).toEqual({ id: victim.id, updatedAt: expect.any(String), deletedAt: expect.any(String) });
    const restored = await call(t.app, 'POST', `/leads/${victim.id}/restore`, { auth: writer });
    expect(restored.body.data.lead).toEqual({ id: victim.id, updatedAt: expect.any(String), deletedAt: null });
  });

  it('a key that may also read gets the whole lead from every write', async () => {
    const reader = await keyWith(['leads:write', 'leads:read']);
    const victim = await victimLead();
    expect((await call(t.app, 'PATCH', `/leads/${victim.id}`, { auth: reader, body: { status: 'CONTACTED' } })).body.data.lead).toMatchObject({ email: victim.email, company: 'Victim Corp' });
    const upsert = await call(t.app, 'POST', '/leads/batch', { auth: reader, body: { upsertBy: 'email', items: [{ name: 'Victor Victim', email: victim.email }] } });
    expect(upsert.body.data.results[0].lead).toMatchObject({ email: victim.email, notes: 'Prefers calls after 5pm' });
    const stale = await call(t.app, 'PATCH', `/leads/${victim.id}`, { auth: reader, body: { status: 'NEW' }, headers: { 'if-match': '"stale"' } });
    expect(stale.body.data.lead).toMatchObject({ email: victim.email });
    expect((await call(t.app, 'DELETE', `/leads/${victim.id}`, { auth: reader })).body.data.lead).toMatchObject({ company: 'Victim Corp' });
    expect((await call(t.app, 'POST', `/leads/${victim.id}/restore`, { auth: reader })).body.data.lead).toMatchObject({ company: 'Victim Corp' });
  });

  it("a replayed batch shows the replaying key's view, whoever sent it first", async () => {
    const victim = await victimLead();
    const body = { upsertBy: 'email', items: [{ name: 'Victor Victim', email: victim.email }] };
    const headers = { 'idempotency-key': `replay-${victim.id}` };
    const first = await call(t.app, 'POST', '/leads/batch', { auth: a.auth, body, headers });
    expect(first.body.data.results[0].lead).toMatchObject({ email: victim.email });
    const replayed = await call(t.app, 'POST', '/leads/batch', { auth: writer, body, headers });
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(fieldsOf(replayed.body.data.results[0].lead)).toEqual(MINIMAL);
    const own = { 'idempotency-key': `own-${victim.id}` };
    await call(t.app, 'POST', '/leads/batch', { auth: writer, body, headers: own });
    const ownReplay = await call(t.app, 'POST', '/leads/batch', { auth: writer, body, headers: own });
    expect(ownReplay.headers['idempotent-replayed']).toBe('true');
    expect(fieldsOf(ownReplay.body.data.results[0].lead)).toEqual(MINIMAL);
  });
});

describe.each([
  { path: '/accounts', noun: 'account', scope: 'accounts:write' as const, read: 'accounts:read' as const, body: { name: 'Secret Holdings', email: 'cfo@secret.example', industry: 'Mining' } },
  { path: '/deals', noun: 'deal', scope: 'deals:write' as const, read: 'deals:read' as const, body: { name: 'Secret merger', amount: '990000.00', currency: 'EUR' } },
])('$path with $scope only', ({ path, noun, scope, read, body }) => {
  async function existing() {
    n += 1;
    const res = await call(t.app, 'POST', path, { auth: a.auth, body: { ...body, externalId: `ext-${noun}-${n}` } });
    expect(res.status).toBe(201);
    return res.body.data[noun] as { id: string; externalId: string };
  }

  it('PATCH, an upsert hit, a batch PATCH, DELETE and restore answer the minimal view; a create whole', async () => {
    const writer = await keyWith([scope]);
    const item = await existing();
    const patched = await call(t.app, 'PATCH', `${path}/${item.id}`, { auth: writer, body: { name: 'Renamed' } });
    expect(patched.body.data[noun]).toEqual({ id: item.id, updatedAt: expect.any(String), deletedAt: null });
    const upsert = await call(t.app, 'POST', `${path}/batch`, { auth: writer, body: { upsertBy: 'externalId', items: [{ name: 'probe', externalId: item.externalId }, { name: 'Made here', externalId: `new-${item.id}` }] } });
    expect(upsert.body.data.results.map((r: { status: number }) => r.status)).toEqual([200, 201]);
    expect(fieldsOf(upsert.body.data.results[0][noun])).toEqual(MINIMAL);
    expect(upsert.body.data.results[1][noun]).toMatchObject({ name: 'Made here', externalId: `new-${item.id}` });
    const batch = await call(t.app, 'PATCH', `${path}/batch`, { auth: writer, body: { items: [{ id: item.id, name: 'Again' }] } });
    expect(fieldsOf(batch.body.data.results[0][noun])).toEqual(MINIMAL);
    expect(fieldsOf((await call(t.app, 'DELETE', `${path}/${item.id}`, { auth: writer })).body.data[noun])).toEqual(MINIMAL);
    expect((await call(t.app, 'POST', `${path}/${item.id}/restore`, { auth: writer })).body.data[noun]).toEqual({ id: item.id, updatedAt: expect.any(String), deletedAt: null });
  });

  it('with the read scope too, the whole item', async () => {
    const reader = await keyWith([scope, read]);
    const item = await existing();
    expect((await call(t.app, 'PATCH', `${path}/${item.id}`, { auth: reader, body: { name: 'Renamed' } })).body.data[noun]).toMatchObject({ name: 'Renamed', externalId: item.externalId });
  });
});

describe('records with records:write only', () => {
  async function existingRecord() {
    n += 1;
    const res = await call(t.app, 'POST', '/objects/parcels/records', { auth: a.auth, body: { title: 'Confidential parcel', recipient: 'someone@example.com', externalId: `parcel-${n}` } });
    expect(res.status).toBe(201);
    return res.body.data.record as { id: string; externalId: string };
  }

  it('every write of an existing record answers its minimal view, objectSlug included; a create whole', async () => {
    const writer = await keyWith(['records:write']);
    const record = await existingRecord();
    const patched = await call(t.app, 'PATCH', `/objects/parcels/records/${record.id}`, { auth: writer, body: { title: 'Renamed' } });
    expect(patched.body.data.record).toEqual({ id: record.id, objectSlug: 'parcels', updatedAt: expect.any(String), deletedAt: null });
    const upsert = await call(t.app, 'POST', '/objects/parcels/records/batch', { auth: writer, body: { upsertBy: 'externalId', items: [{ title: 'probe', externalId: record.externalId }, { title: 'Mine', externalId: `mine-${record.id}` }] } });
    expect(fieldsOf(upsert.body.data.results[0].record)).toEqual(RECORD_MINIMAL);
    expect(upsert.body.data.results[1], JSON.stringify(upsert.body)).toMatchObject({ status: 201, record: { title: 'Mine' } });
    const batch = await call(t.app, 'PATCH', '/objects/parcels/records/batch', { auth: writer, body: { items: [{ id: record.id, ifMatch: '"stale"', title: 'x' }] } });
    expect(batch.body.data.results[0].status).toBe(412);
    expect(fieldsOf(batch.body.data.results[0].record)).toEqual(RECORD_MINIMAL);
    expect(fieldsOf((await call(t.app, 'DELETE', `/objects/parcels/records/${record.id}`, { auth: writer })).body.data.record)).toEqual(RECORD_MINIMAL);
    expect(fieldsOf((await call(t.app, 'POST', `/objects/parcels/records/${record.id}/restore`, { auth: writer })).body.data.record)).toEqual(RECORD_MINIMAL);
    expect(JSON.stringify([patched.body, upsert.body.data.results[0], batch.body])).not.toMatch(/Confidential|someone@/);
  });

  it('with records:read too, the whole record', async () => {
    const reader = await keyWith(['records:write', 'records:read']);
    const record = await existingRecord();
    expect((await call(t.app, 'PATCH', `/objects/parcels/records/${record.id}`, { auth: reader, body: { title: 'Renamed' } })).body.data.record).toMatchObject({ title: 'Renamed', recipient: 'someone@example.com' });
  });
});

describe('notes and tasks with their :write scope only', () => {
  it('editing, deleting and restoring a note answer its minimal view; adding one the whole note', async () => {
    const writer = await keyWith(['notes:write']);
    const lead = await victimLead();
    const note = (await call(t.app, 'POST', '/notes', { auth: a.auth, body: { target: { object: 'lead', id: lead.id }, body: 'Private: owes us money' } })).body.data.note;
    const edited = await call(t.app, 'PATCH', `/notes/${note.id}`, { auth: writer, body: { body: 'overwritten' } });
    expect(edited.body.data.note).toEqual({ id: note.id, updatedAt: expect.any(String), deletedAt: null });
    const stale = await call(t.app, 'PATCH', `/notes/${note.id}`, { auth: writer, body: { body: 'x' }, headers: { 'if-match': '"stale"' } });
    expectError(stale, 412, 'PRECONDITION_FAILED');
    expect(fieldsOf(stale.body.data.note)).toEqual(MINIMAL);
    expect(fieldsOf((await call(t.app, 'DELETE', `/notes/${note.id}`, { auth: writer })).body.data.note)).toEqual(MINIMAL);
    expect(fieldsOf((await call(t.app, 'POST', `/notes/${note.id}/restore`, { auth: writer })).body.data.note)).toEqual(MINIMAL);
    const added = await call(t.app, 'POST', '/notes', { auth: writer, body: { target: { object: 'lead', id: lead.id }, body: 'Mine' } });
    expect(added.body.data.note).toMatchObject({ body: 'Mine', target: { object: 'lead', id: lead.id } });
    const reader = await keyWith(['notes:write', 'notes:read']);
    expect((await call(t.app, 'PATCH', `/notes/${note.id}`, { auth: reader, body: { body: 'Seen' } })).body.data.note).toMatchObject({ body: 'Seen' });
  });

  it("updating a task answers its minimal view, or the whole task with tasks:read", async () => {
    const writer = await keyWith(['tasks:write']);
    const task = (await call(t.app, 'POST', '/tasks', { auth: a.auth, body: { title: 'Call the lawyer about the lawsuit' } })).body.data.task;
    const done = await call(t.app, 'PATCH', `/tasks/${task.id}`, { auth: writer, body: { status: 'done' } });
    expect(done.body.data.task).toEqual({ id: task.id, updatedAt: expect.any(String), deletedAt: null });
    const reader = await keyWith(['tasks:write', 'tasks:read']);
    expect((await call(t.app, 'PATCH', `/tasks/${task.id}`, { auth: reader, body: { status: 'open' } })).body.data.task).toMatchObject({ title: 'Call the lawyer about the lawsuit' });
  });
});

describe('webhook endpoints with webhooks:write only', () => {
  // The endpoint's URL may carry a token (https://hooks.example/T0/B1/xyz): a key that may change endpoints but not
  // read them learns neither it nor the events, nor what the receiver answered a delivery. Nor can it redirect the
  // events (webhooks.test.ts, "who may direct events to a URL").
  const secretUrl = 'https://hooks.example.com/services/T0SECRET/B0SECRET/tokentokentoken';
  let writer: Record<string, string>;
  let endpoint: { id: string };
  beforeAll(async () => {
    writer = await keyWith(['webhooks:write']);
    endpoint = await inTransaction(t.ctx, (trx) => createWebhook(t.ctx, trx, a.orgId, { url: secretUrl, events: ['lead.created'], description: 'Ops channel' }));
  });

  it('an update answers id and updatedAt, with the whole endpoint\'s ETag; a 412 the same view', async () => {
    const res = await call(t.app, 'PATCH', `/webhooks/${endpoint.id}`, { auth: writer, body: { enabled: true } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.webhook).toEqual({ id: endpoint.id, updatedAt: expect.any(String) });
    expect(res.headers.etag).toBe((await call(t.app, 'GET', `/webhooks/${endpoint.id}`, { auth: a.auth })).headers.etag);
    const stale = await call(t.app, 'PATCH', `/webhooks/${endpoint.id}`, { auth: writer, body: { enabled: true }, headers: { 'if-match': '"stale"' } });
    expectError(stale, 412, 'PRECONDITION_FAILED');
    expect(stale.body.data.webhook).toEqual({ id: endpoint.id, updatedAt: expect.any(String) });
    expect(JSON.stringify([res.body, stale.body])).not.toMatch(/SECRET|tokentoken|lead\.created|Ops channel/);
    const reader = await keyWith(['webhooks:write', 'webhooks:read']);
    expect((await call(t.app, 'PATCH', `/webhooks/${endpoint.id}`, { auth: reader, body: { enabled: true } })).body.data.webhook).toMatchObject({ url: secretUrl, description: 'Ops channel' });
  });

  it('a rotation answers the new secret it set, not the endpoint', async () => {
    const res = await call(t.app, 'POST', `/webhooks/${endpoint.id}/rotate-secret`, { auth: writer });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.webhook).toEqual({ id: endpoint.id, updatedAt: expect.any(String), secret: expect.stringMatching(/^whsec_/) });
  });

  it("re-sending a delivery answers what the retry set, not the receiver's answers", async () => {
    const sent = await call(t.app, 'POST', `/webhooks/${endpoint.id}/test`, { auth: a.auth });
    expect(sent.status, JSON.stringify(sent.body)).toBe(201);
    const res = await call(t.app, 'POST', `/webhooks/${endpoint.id}/deliveries/${sent.body.data.delivery.id}/retry`, { auth: writer });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(fieldsOf(res.body.data.delivery)).toEqual(['attempt', 'eventId', 'id', 'nextAttemptAt', 'status', 'webhookId']);
    expect(res.body.data.delivery).toMatchObject({ id: sent.body.data.delivery.id, webhookId: endpoint.id, status: 'PENDING' });
  });

  it('the OpenAPI document names the minimal views', async () => {
    const doc = (await call(t.app, 'GET', '/openapi.json')).body;
    const data = (path: string, method: string) => doc.paths[`/api/public/v1${path}`][method].responses['200'].content['application/json'].schema.properties.data.properties;
    const webhook = { anyOf: [{ $ref: '#/components/schemas/Webhook' }, { $ref: '#/components/schemas/MinimalWebhook' }] };
    expect(data('/webhooks/{id}', 'patch').webhook).toEqual(webhook);
    expect(data('/webhooks/{id}/rotate-secret', 'post').webhook).toEqual(webhook);
    expect(data('/webhooks/{id}/deliveries/{deliveryId}/retry', 'post').delivery).toEqual({ anyOf: [{ $ref: '#/components/schemas/WebhookDelivery' }, { $ref: '#/components/schemas/MinimalDelivery' }] });
  });
});

describe('MCP tools of a key that may write but not read', () => {
  let writer: Client;
  let reader: Client;
  beforeAll(async () => {
    const origin = await listen(t);
    writer = await connect(httpTransport(origin, (await addKey(t.ctx, a.orgId, ['leads:write', 'deals:write', 'records:write', 'tasks:write', 'notes:write'])).key));
    reader = await connect(httpTransport(origin, (await addKey(t.ctx, a.orgId, ['leads:write', 'leads:read'])).key));
  });
  afterAll(async () => {
    await writer?.close();
    await reader?.close();
  });

  it('update, delete, restore, stage and completion tools answer minimal views; create tools the whole item', async () => {
    const victim = await victimLead();
    expect((await callOk(writer, 'update_lead', { id: victim.id, changes: { status: 'CONTACTED' } })).lead).toEqual({ id: victim.id, updatedAt: expect.any(String), deletedAt: null });
    expect(fieldsOf((await callOk(writer, 'delete_lead', { id: victim.id })).lead)).toEqual(MINIMAL);
    expect(fieldsOf((await callOk(writer, 'restore_lead', { id: victim.id })).lead)).toEqual(MINIMAL);
    expect((await callOk(writer, 'create_lead', { name: 'Made by MCP', company: 'Mine' })).lead).toMatchObject({ name: 'Made by MCP', company: 'Mine' });
    const record = (await call(t.app, 'POST', '/objects/parcels/records', { auth: a.auth, body: { title: 'Confidential parcel' } })).body.data.record;
    expect(fieldsOf((await callOk(writer, 'update_record', { object: 'parcels', id: record.id, changes: { title: 'x' } })).record)).toEqual(RECORD_MINIMAL);
    const task = (await call(t.app, 'POST', '/tasks', { auth: a.auth, body: { title: 'Private errand' } })).body.data.task;
    expect(fieldsOf((await callOk(writer, 'complete_task', { id: task.id })).task)).toEqual(MINIMAL);
    expect(fieldsOf((await callOk(writer, 'update_task', { id: task.id, changes: { dueDate: '2027-01-01' } })).task)).toEqual(MINIMAL);
    const deal = (await call(t.app, 'POST', '/deals', { auth: a.auth, body: { name: 'Secret merger', amount: '990000.00', currency: 'EUR' } })).body.data.deal;
    expect(fieldsOf((await callOk(writer, 'move_deal_stage', { id: deal.id, stage: 'proposal' })).deal)).toEqual(MINIMAL);
    const note = (await call(t.app, 'POST', '/notes', { auth: a.auth, body: { target: { object: 'deal', id: deal.id }, body: 'Board approved' } })).body.data.note;
    expect(fieldsOf((await callOk(writer, 'update_note', { id: note.id, changes: { body: 'x' } })).note)).toEqual(MINIMAL);
    await callOk(writer, 'delete_note', { id: note.id });
    expect(fieldsOf((await callOk(writer, 'restore_note', { id: note.id })).note)).toEqual(MINIMAL);
  });

  it('a key that may also read gets the whole lead', async () => {
    const victim = await victimLead();
    expect((await callOk(reader, 'update_lead', { id: victim.id, changes: { status: 'CONTACTED' } })).lead).toMatchObject({ email: victim.email, company: 'Victim Corp' });
  });
});

describe('the SDK', () => {
  it('types a write of an existing item as whole or minimal, isWhole telling them apart; the ETag is the whole item\'s', async () => {
    const baseUrl = await listen(t);
    const writer = createClient({ baseUrl, apiKey: (await addKey(t.ctx, a.orgId, ['leads:write'])).key });
    const victim = await victimLead();
    const written = await writer.leads.update(victim.id, { status: 'CONTACTED' });
    expect(isWhole(written)).toBe(false);
    expect(written).toEqual({ id: victim.id, updatedAt: expect.any(String), deletedAt: null });
    expect(etagOf(written)).toBe((await call(t.app, 'GET', `/leads/${victim.id}`, { auth: a.auth })).headers.etag);
    expect(isWhole(await writer.leads.update(victim.id, { status: 'QUALIFIED' }, { ifMatch: etagOf(written)! }))).toBe(false);
    const full = createClient({ baseUrl, apiKey: a.key });
    const whole = await full.leads.update(victim.id, { status: 'NEW' });
    expect(isWhole(whole) && whole.email).toBe(victim.email);
  });
});

describe('the OpenAPI document', () => {
  const success = (doc: any, path: string, method: string, status: string) => doc.paths[`/api/public/v1${path}`][method].responses[status].content['application/json'].schema.properties.data;

  it('describes the answer of a write of an existing item as the item or its minimal view, and a create as the item', async () => {
    const doc = (await call(t.app, 'GET', '/openapi.json')).body;
    const written = { anyOf: [{ $ref: '#/components/schemas/Lead' }, { $ref: '#/components/schemas/MinimalView' }] };
    for (const [path, method] of [['/leads/{id}', 'patch'], ['/leads/{id}', 'delete'], ['/leads/{id}/restore', 'post']]) {
      expect(success(doc, path!, method!, '200').properties.lead, `${method} ${path}`).toEqual(written);
    }
    expect(success(doc, '/leads/batch', 'post', '200').properties.results.items.properties.lead).toEqual(written);
    expect(success(doc, '/leads', 'post', '201').properties.lead).toEqual({ $ref: '#/components/schemas/Lead' });
    expect(doc.components.schemas.MinimalView.required.sort()).toEqual(['deletedAt', 'id', 'updatedAt']);
  });

  it("does so in an organization's typed record paths too", async () => {
    const doc = (await call(t.app, 'GET', '/api/public/v1/openapi.json', { auth: a.auth })).body;
    const written = { anyOf: [{ $ref: '#/components/schemas/Record_parcels' }, { $ref: '#/components/schemas/MinimalView' }] };
    expect(success(doc, '/objects/parcels/records/{id}', 'patch', '200').properties.record).toEqual(written);
    expect(success(doc, '/objects/parcels/records/batch', 'post', '200').properties.results.items.properties.record).toEqual(written);
    expect(success(doc, '/objects/parcels/records', 'post', '201').properties.record).toEqual({ $ref: '#/components/schemas/Record_parcels' });
  });
});
