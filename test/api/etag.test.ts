import { hash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/lib/canonical-json.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { addKey, seedOrg, type Seeded } from '../helpers/seed.js';
import { call, expectError, type Res } from '../helpers/http.js';

/** Optimistic concurrency (contract §8): ETag on one-resource answers, If-None-Match → 304, If-Match → 412. */
let t: TestApp;
let s: Seeded;

beforeAll(async () => {
  t = await buildTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  s = await seedOrg(t.ctx, { rateLimitPerMinute: 1_000_000 });
  const object = await call(t.app, 'POST', '/objects', { auth: s.auth, body: { slug: 'gadgets', name: 'Gadgets', fields: [{ key: 'title', label: 'Title', type: 'text' }] } });
  expect(object.status).toBe(201);
  // A note needs a live item to be about.
  const lead = await call(t.app, 'POST', '/leads', { auth: s.auth, body: { name: 'Ada' } });
  RESOURCES.find((r) => r.key === 'note')!.body.target = { object: 'lead', id: lead.body.data.lead.id };
});
afterAll(() => t.close());

interface Resource {
  key: 'lead' | 'account' | 'deal' | 'record' | 'webhook' | 'note' | 'task';
  path: string;
  body: Record<string, unknown>;
  /** Two different changes, for two clients. */
  patches: [Record<string, unknown>, Record<string, unknown>];
  trash: boolean;
}

const RESOURCES: Resource[] = [
  { key: 'lead', path: '/leads', body: { name: 'Ada' }, patches: [{ company: 'Analytical Engines' }, { title: 'CTO' }], trash: true },
  { key: 'account', path: '/accounts', body: { name: 'Acme' }, patches: [{ industry: 'Tools' }, { website: 'https://acme.example' }], trash: true },
  { key: 'deal', path: '/deals', body: { name: 'Renewal' }, patches: [{ stage: 'proposal' }, { amount: '1200.00', currency: 'EUR' }], trash: true },
  { key: 'record', path: '/objects/gadgets/records', body: { title: 'Widget' }, patches: [{ title: 'Widget v2' }, { title: 'Widget v3' }], trash: true },
  { key: 'note', path: '/notes', body: { body: 'Called Ada' }, patches: [{ body: 'Called Ada twice' }, { body: 'Called Ada, left a message' }], trash: true },
  { key: 'task', path: '/tasks', body: { title: 'Call Ada' }, patches: [{ title: 'Call Ada back' }, { dueDate: '2026-12-01' }], trash: true },
  { key: 'webhook', path: '/webhooks', body: { url: 'http://127.0.0.1:9/hook', events: ['lead.created'] }, patches: [{ description: 'Sync' }, { events: ['*'] }], trash: false },
];

const tagOf = (res: Res) => res.headers.etag as string;

async function create(r: Resource): Promise<{ id: string; etag: string }> {
  const res = await call(t.app, 'POST', r.path, { auth: s.auth, body: r.body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { id: res.body.data[r.key].id, etag: tagOf(res) };
}
const get = (r: Resource, id: string, headers: Record<string, string> = {}) => call(t.app, 'GET', `${r.path}/${id}`, { auth: s.auth, headers });
const patch = (r: Resource, id: string, body: Record<string, unknown>, ifMatch?: string) =>
  call(t.app, 'PATCH', `${r.path}/${id}`, { auth: s.auth, body, headers: ifMatch === undefined ? {} : { 'if-match': ifMatch } });

describe.each(RESOURCES)('$key', (r) => {
  it('answers carry the ETag of the resource they return, the same for a create, a read and an update of one version', async () => {
    const { id, etag } = await create(r);
    const read = await get(r, id);
    expect(read.status).toBe(200);
    expect(tagOf(read)).toBe(t.ctx.entityTagger.tagOf(read.body.data[r.key]));
    expect(etag).toBe(tagOf(read)); // a webhook's create answer also shows its secret, once, which its tag leaves out
    const updated = await patch(r, id, r.patches[0]);
    expect(updated.status).toBe(200);
    expect(tagOf(updated)).not.toBe(tagOf(read));
    expect(tagOf(updated)).toBe(tagOf(await get(r, id)));
    expect(tagOf(updated)).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
  });

  it('If-None-Match with the current tag (weakly compared, in a list, or *) is 304 without a body; another tag is 200', async () => {
    const { id } = await create(r);
    const etag = tagOf(await get(r, id));
    for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const res = await get(r, id, { 'if-none-match': header });
      expect(res.status, header).toBe(304);
      expect(res.body).toBe('');
      expect(res.headers.etag).toBe(etag);
      expect(res.headers['ratelimit']).toEqual(expect.any(String));
      expect(res.headers['x-ratelimit-remaining']).toEqual(expect.any(String));
    }
    await patch(r, id, r.patches[0]);
    const changed = await get(r, id, { 'if-none-match': etag });
    expect(changed.status).toBe(200);
    expect(tagOf(changed)).not.toBe(etag);
  });

  it('two clients read the same version; the first PATCH with If-Match wins, the second gets 412 with the first one\'s result', async () => {
    const { id } = await create(r);
    const read = tagOf(await get(r, id));
    const first = await patch(r, id, r.patches[0], read);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const second = await patch(r, id, r.patches[1], read);
    expectError(second, 412, 'PRECONDITION_FAILED');
    expect(second.body.data[r.key]).toEqual(first.body.data[r.key]);
    expect(second.headers.etag).toBe(tagOf(first));
    expect((await get(r, id)).body.data[r.key]).toEqual(first.body.data[r.key]);
    const retried = await patch(r, id, r.patches[1], tagOf(first));
    expect(retried.status).toBe(200);
  });

  it('If-Match is compared strongly: a weak tag never matches; * matches the existing resource', async () => {
    const { id } = await create(r);
    const etag = tagOf(await get(r, id));
    expectError(await patch(r, id, r.patches[0], `W/${etag}`), 412, 'PRECONDITION_FAILED');
    expect((await patch(r, id, r.patches[0], '*')).status).toBe(200);
  });

  it('concurrent PATCHes with the same If-Match: exactly one is applied', async () => {
    const { id } = await create(r);
    const read = tagOf(await get(r, id));
    const answers = await Promise.all([patch(r, id, r.patches[0], read), patch(r, id, r.patches[1], read)]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 412]);
    const winner = answers.find((a) => a.status === 200)!;
    const loser = answers.find((a) => a.status === 412)!;
    expect(loser.body.data[r.key]).toEqual(winner.body.data[r.key]);
    expect((await get(r, id)).body.data[r.key]).toEqual(winner.body.data[r.key]);
  });

  it('If-Match on a missing resource is 404 as without it', async () => {
    expectError(await patch(r, 'ffffffffffffffffffffffff', r.patches[0], '*'), 404, 'NOT_FOUND');
  });
});

describe('DELETE /webhooks/{id}', () => {
  it('with a stale If-Match is 412 and keeps the endpoint; with the current tag it deletes it', async () => {
    const r = RESOURCES.find((x) => x.key === 'webhook')!;
    const { id } = await create(r);
    const stale = tagOf(await get(r, id));
    const current = await patch(r, id, r.patches[0]);
    const refused = await call(t.app, 'DELETE', `/webhooks/${id}`, { auth: s.auth, headers: { 'if-match': stale } });
    expectError(refused, 412, 'PRECONDITION_FAILED');
    expect(refused.body.data.webhook).toEqual(current.body.data.webhook);
    expect((await get(r, id)).status).toBe(200);
    expect((await call(t.app, 'DELETE', `/webhooks/${id}`, { auth: s.auth, headers: { 'if-match': tagOf(current) } })).status).toBe(200);
    expectError(await get(r, id), 404, 'NOT_FOUND');
  });
});

describe.each(RESOURCES.filter((r) => r.trash))('$key in the trash', (r) => {
  const del = (id: string, ifMatch: string, query = '') => call(t.app, 'DELETE', `${r.path}/${id}${query}`, { auth: s.auth, headers: { 'if-match': ifMatch } });
  const restore = (id: string, ifMatch: string) => call(t.app, 'POST', `${r.path}/${id}/restore`, { auth: s.auth, headers: { 'if-match': ifMatch } });

  it('DELETE with a stale If-Match is 412 and leaves the item live; with the current tag it trashes it, whose tag restore then checks', async () => {
    const { id, etag: stale } = await create(r);
    const current = await patch(r, id, r.patches[0]);
    const refused = await del(id, stale);
    expectError(refused, 412, 'PRECONDITION_FAILED');
    expect(refused.body.data[r.key]).toEqual(current.body.data[r.key]);
    expect((await get(r, id)).status).toBe(200);

    const deleted = await del(id, tagOf(current));
    expect(deleted.status).toBe(200);
    expect(deleted.body.data[r.key].deletedAt).toEqual(expect.any(String));
    expect(tagOf(deleted)).toBe(t.ctx.entityTagger.tagOf(deleted.body.data[r.key]));

    const wrong = await restore(id, tagOf(current));
    expectError(wrong, 412, 'PRECONDITION_FAILED');
    expect(wrong.body.data[r.key]).toEqual(deleted.body.data[r.key]);
    const restored = await restore(id, tagOf(deleted));
    expect(restored.status).toBe(200);
    expect(restored.body.data[r.key].deletedAt).toBeNull();
    expect(tagOf(restored)).toBe(tagOf(await get(r, id)));
  });

  it('a permanent DELETE with a stale If-Match is 412 and removes nothing; an unknown id with If-Match is 404', async () => {
    const { id, etag: stale } = await create(r);
    await patch(r, id, r.patches[0]);
    expectError(await del(id, stale, '?permanent=true'), 412, 'PRECONDITION_FAILED');
    expect((await get(r, id)).status).toBe(200);
    expectError(await del('ffffffffffffffffffffffff', '*'), 404, 'NOT_FOUND');
    expectError(await restore('ffffffffffffffffffffffff', '*'), 404, 'NOT_FOUND');
  });
});

describe('custom objects', () => {
  it('PATCH /objects/{slug} honours If-Match; GET honours If-None-Match', async () => {
    const created = await call(t.app, 'POST', '/objects', { auth: s.auth, body: { slug: 'tagged', name: 'Tagged', fields: [{ key: 'title', label: 'Title', type: 'text' }] } });
    const read = await call(t.app, 'GET', '/objects/tagged', { auth: s.auth });
    expect(tagOf(read)).toBe(tagOf(created));
    expect((await call(t.app, 'GET', '/objects/tagged', { auth: s.auth, headers: { 'if-none-match': tagOf(read) } })).status).toBe(304);
    const patchObject = (name: string, ifMatch: string) => call(t.app, 'PATCH', '/objects/tagged', { auth: s.auth, body: { name }, headers: { 'if-match': ifMatch } });
    const first = await patchObject('First', tagOf(read));
    expect(first.status).toBe(200);
    const second = await patchObject('Second', tagOf(read));
    expectError(second, 412, 'PRECONDITION_FAILED');
    expect(second.body.data.object).toEqual(first.body.data.object);
    expect((await patchObject('Third', '*')).body.data.object.name).toBe('Third');
  });
});

describe('the OpenAPI document', () => {
  it('documents ETag, If-None-Match with 304 on reads, If-Match with 412 on conditional writes', async () => {
    const doc = (await call(t.app, 'GET', '/api/public/v1/openapi.json')).body;
    const op = (path: string, method: string) => doc.paths[`/api/public/v1${path}`][method];
    const names = (o: { parameters?: { in: string; name: string }[] }) => (o.parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name);
    expect(names(op('/leads/{id}', 'get'))).toContain('if-none-match');
    expect(names(op('/deal-stages', 'get'))).toContain('if-none-match');
    expect(op('/deal-stages', 'get').responses['200'].headers.ETag).toBeDefined();
    expect(op('/leads/{id}', 'get').responses['304'].headers.ETag).toBeDefined();
    expect(op('/leads/{id}', 'get').responses['200'].headers.ETag).toBeDefined();
    for (const [path, method] of [['/leads/{id}', 'patch'], ['/deals/{id}', 'delete'], ['/objects/{object}/records/{id}/restore', 'post'], ['/webhooks/{id}', 'patch'], ['/webhooks/{id}', 'delete'], ['/objects/{slug}', 'patch'], ['/deal-stages', 'put']] as const) {
      expect(names(op(path, method)), `${method} ${path}`).toContain('if-match');
      expect(op(path, method).responses['412'].$ref).toBe('#/components/responses/PreconditionFailed');
    }
    expect(op('/leads', 'post').responses['201'].headers.ETag).toBeDefined();
    expect(op('/leads', 'get').responses['200'].headers.ETag).toBeUndefined();
  });
});

// A key that may write leads but not read them gets the whole lead's ETag beside the minimal view: the tag is
// keyed (crypto/entity-tag.ts), so knowing it lets that key check no guess of the fields it may not read.

/** The tag an unkeyed digest of the item would be: what anyone holding a guess of every field could compute. */
const unkeyed = (item: unknown) => `"${hash('sha256', canonicalJson(item), 'base64url').slice(0, 27)}"`;

async function privateLead(email: string) {
  const res = await call(t.app, 'POST', '/leads', { auth: s.auth, body: { name: 'Grace', email, company: 'Private Co', status: 'NEW' } });
  expect(res.status).toBe(201);
  return res.body.data.lead as { id: string };
}

const readWhole = async (id: string) => {
  const res = await call(t.app, 'GET', `/leads/${id}`, { auth: s.auth });
  return { lead: res.body.data.lead as Record<string, unknown>, etag: res.headers.etag as string };
};

describe('keyed ETags for a key that may write but not read', () => {
  it('the minimal view carries the whole lead\'s tag, which no digest of the whole lead (even a perfect guess) reproduces, and it works as If-Match', async () => {
    const writer = (await addKey(t.ctx, s.orgId, ['leads:write'])).auth;
    const { id } = await privateLead('grace@private.example');
    const written = await call(t.app, 'PATCH', `/leads/${id}`, { auth: writer, body: { title: 'CTO' } });
    expect(written.status).toBe(200);
    expect(Object.keys(written.body.data.lead).sort()).toEqual(['deletedAt', 'id', 'updatedAt']);
    const whole = await readWhole(id);
    expect(written.headers.etag).toBe(whole.etag);
    expect(written.headers.etag).not.toBe(unkeyed(whole.lead));
    expect(written.headers.etag).not.toBe(unkeyed(written.body.data.lead));

    const next = await call(t.app, 'PATCH', `/leads/${id}`, { auth: writer, body: { title: 'CEO' }, headers: { 'if-match': written.headers.etag as string } });
    expect(next.status).toBe(200);
    const stale = await call(t.app, 'PATCH', `/leads/${id}`, { auth: writer, body: { title: 'CFO' }, headers: { 'if-match': written.headers.etag as string } });
    expect(stale.status).toBe(412);
    expect(Object.keys(stale.body.data.lead).sort()).toEqual(['deletedAt', 'id', 'updatedAt']);
    const current = await readWhole(id);
    expect(stale.headers.etag).toBe(current.etag);
    expect(stale.headers.etag).toBe(next.headers.etag);
    expect(stale.headers.etag).not.toBe(unkeyed(current.lead));
  });

  it('a batch result\'s etag is keyed the same way, and is the next item\'s ifMatch', async () => {
    const writer = (await addKey(t.ctx, s.orgId, ['leads:write'])).auth;
    const { id } = await privateLead('ada@private.example');
    const first = await call(t.app, 'PATCH', '/leads/batch', { auth: writer, body: { items: [{ id, title: 'CTO' }] } });
    const [result] = first.body.data.results;
    expect(result).toMatchObject({ status: 200, lead: { id }, etag: (await readWhole(id)).etag });
    expect(result.etag).not.toBe(unkeyed((await readWhole(id)).lead));
    const second = await call(t.app, 'PATCH', '/leads/batch', { auth: writer, body: { items: [{ id, title: 'CEO', ifMatch: result.etag }, { id, title: 'CFO', ifMatch: result.etag }] } });
    expect(second.body.data.results.map((r: { status: number }) => r.status)).toEqual([200, 412]);
  });
});

describe('tags across instances', () => {
  it('another instance of the deployment (its own context, the same database) answers the same tag, and takes it as If-Match', async () => {
    const other = await buildTestApp({ sameDatabaseAs: t });
    try {
      const { id } = await privateLead('lin@private.example');
      const here = await readWhole(id);
      const there = await call(other.app, 'GET', `/leads/${id}`, { auth: s.auth });
      expect(there.headers.etag).toBe(here.etag);
      const written = await call(other.app, 'PATCH', `/leads/${id}`, { auth: s.auth, body: { title: 'CTO' }, headers: { 'if-match': here.etag } });
      expect(written.status).toBe(200);
      expect(written.headers.etag).toBe((await readWhole(id)).etag);
    } finally {
      await other.close();
    }
  });
});
