import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call, type Res } from '../helpers/http.js';

/**
 * Every answer that carries one resource has its ETag (contract §8), the one a GET of the resource answers
 * right after, so that a client can write again with If-Match without reading first.
 */
let t: TestApp;
let s: Seeded;
const ids: Record<string, string> = {};

beforeAll(async () => {
  t = await buildTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  s = await seedOrg(t.ctx, { rateLimitPerMinute: 1_000_000 });
});
afterAll(() => t.close());

const send = (method: 'POST' | 'PATCH' | 'PUT' | 'DELETE', path: string, body?: unknown) => call(t.app, method, path, { auth: s.auth, ...(body === undefined ? {} : { body }) });
const tagOfGet = async (path: string) => {
  const res = await call(t.app, 'GET', path, { auth: s.auth });
  expect(res.status, `GET ${path}`).toBe(200);
  return res.headers.etag;
};

interface Write {
  name: string;
  /** The write; `ids` holds what earlier writes created. */
  run(): Promise<Res>;
  /** Where a GET reads the resource the write answered. */
  readAt(res: Res): string;
}

const created = (key: string, path: string, body: unknown): Write => ({
  name: `POST ${path}`,
  run: async () => {
    const res = await send('POST', path, body);
    ids[key] = res.body.data?.[key]?.id;
    return res;
  },
  readAt: (res) => `${path}/${res.body.data[key].id}`,
});
const patched = (key: string, path: string, body: unknown): Write => ({ name: `PATCH ${path}/{id}`, run: () => send('PATCH', `${path}/${ids[key]}`, body), readAt: () => `${path}/${ids[key]}` });
const restored = (key: string, path: string): Write => ({
  name: `POST ${path}/{id}/restore`,
  run: async () => {
    expect((await send('DELETE', `${path}/${ids[key]}`)).status).toBe(200);
    return send('POST', `${path}/${ids[key]}/restore`);
  },
  readAt: () => `${path}/${ids[key]}`,
});

const WRITES: Write[] = [
  { name: 'POST /objects', run: () => send('POST', '/objects', { slug: 'gears', name: 'Gears', fields: [{ key: 'title', label: 'Title', type: 'text' }] }), readAt: () => '/objects/gears' },
  { name: 'PATCH /objects/{slug}', run: () => send('PATCH', '/objects/gears', { name: 'Cogs' }), readAt: () => '/objects/gears' },
  { name: 'PATCH /objects/leads (field definitions)', run: () => send('PATCH', '/objects/leads', { fields: [{ key: 'tier', label: 'Tier', type: 'text' }] }), readAt: () => '/objects/leads' },
  {
    name: 'PUT /deal-stages',
    run: () => send('PUT', '/deal-stages', { stages: [{ key: 'open', label: 'Open', kind: 'open' }, { key: 'won', label: 'Won', kind: 'won' }, { key: 'lost', label: 'Lost', kind: 'lost' }] }),
    readAt: () => '/deal-stages',
  },
  created('lead', '/leads', { name: 'Ada', email: 'ada@example.com', tier: 'gold' }),
  patched('lead', '/leads', { title: 'CTO' }),
  restored('lead', '/leads'),
  created('account', '/accounts', { name: 'Acme' }),
  patched('account', '/accounts', { industry: 'Tools' }),
  restored('account', '/accounts'),
  created('deal', '/deals', { name: 'Renewal' }),
  patched('deal', '/deals', { stage: 'won' }),
  restored('deal', '/deals'),
  created('record', '/objects/gears/records', { title: 'Spur' }),
  patched('record', '/objects/gears/records', { title: 'Helical' }),
  restored('record', '/objects/gears/records'),
  { name: 'POST /notes', run: async () => created('note', '/notes', { body: 'Called Ada', target: { object: 'lead', id: ids.lead } }).run(), readAt: (res) => `/notes/${res.body.data.note.id}` },
  patched('note', '/notes', { body: 'Called Ada twice' }),
  restored('note', '/notes'),
  created('task', '/tasks', { title: 'Call Ada' }),
  patched('task', '/tasks', { dueDate: '2026-12-01' }),
  restored('task', '/tasks'),
  created('webhook', '/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['lead.created'] }),
  patched('webhook', '/webhooks', { description: 'Sync' }),
  { name: 'POST /webhooks/{id}/rotate-secret', run: () => send('POST', `/webhooks/${ids.webhook}/rotate-secret`), readAt: () => `/webhooks/${ids.webhook}` },
];

describe('answers that carry one resource', () => {
  it.each(WRITES.map((w) => [w.name, w] as const))('%s has the ETag of a following GET', async (_name, write) => {
    const res = await write.run();
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
    expect(res.headers.etag, 'ETag').toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(res.headers.etag).toBe(await tagOfGet(write.readAt(res)));
  });

  it('the tag of a webhook create and of a secret rotation is If-Match for the next PATCH; the secret is not part of it', async () => {
    const create = await send('POST', '/webhooks', { url: 'http://127.0.0.1:9/other', events: ['deal.created'] });
    expect(create.body.data.webhook.secret).toMatch(/^whsec_/);
    const id = create.body.data.webhook.id;
    const withTag = (ifMatch: string, body: unknown) => call(t.app, 'PATCH', `/webhooks/${id}`, { auth: s.auth, body, headers: { 'if-match': ifMatch } });
    expect((await withTag(create.headers.etag as string, { description: 'First' })).status).toBe(200);
    const rotated = await send('POST', `/webhooks/${id}/rotate-secret`);
    expect(rotated.body.data.webhook.secret).toMatch(/^whsec_/);
    expect((await withTag(create.headers.etag as string, { description: 'Stale' })).status).toBe(412);
    expect((await withTag(rotated.headers.etag as string, { description: 'Second' })).status).toBe(200);
  });
});

describe('the OpenAPI document', () => {
  it('documents the ETag header on the answers of creates, updates, restores and rotate-secret, not on the stub of a webhook deletion', async () => {
    const doc = (await call(t.app, 'GET', '/api/public/v1/openapi.json')).body;
    const headers = (path: string, method: string, status: string) => doc.paths[`/api/public/v1${path}`][method].responses[status].headers ?? {};
    const tagged: [string, string, string][] = [
      ['/webhooks', 'post', '201'],
      ['/webhooks/{id}/rotate-secret', 'post', '200'],
      ['/webhooks/{id}', 'patch', '200'],
      ['/notes', 'post', '201'],
      ['/tasks/{id}/restore', 'post', '200'],
      ['/objects', 'post', '201'],
      ['/deal-stages', 'put', '200'],
    ];
    for (const [path, method, status] of tagged) expect(headers(path, method, status).ETag, `${method} ${path} ${status}`).toEqual({ $ref: '#/components/headers/ETag' });
    expect(headers('/webhooks/{id}', 'delete', '200').ETag).toBeUndefined();
  });
});
