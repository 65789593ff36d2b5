import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';

/**
 * Batch results carry each item's ETag (contract §8): the one a GET of the item answers right after, usable as
 * `ifMatch` in a following batch without reading the item first.
 */
let t: TestApp;
let s: Seeded;

beforeAll(async () => {
  t = await buildTestApp();
  s = await seedOrg(t.ctx, { rateLimitPerMinute: 1_000_000 });
  const object = await call(t.app, 'POST', '/objects', { auth: s.auth, body: { slug: 'gizmos', name: 'Gizmos', fields: [{ key: 'title', label: 'Title', type: 'text' }, { key: 'size', label: 'Size', type: 'number' }] } });
  expect(object.status).toBe(201);
  // A custom field on each built-in resource, so that the tags cover custom values too.
  for (const slug of ['leads', 'accounts', 'deals']) {
    const res = await call(t.app, 'PATCH', `/objects/${slug}`, { auth: s.auth, body: { fields: [{ key: 'tier', label: 'Tier', type: 'text' }] } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  }
});
afterAll(() => t.close());

interface Resource {
  key: 'lead' | 'account' | 'deal' | 'record';
  path: string;
  /** New items, each with a distinct external id (`n` makes them unique per test). */
  items(n: string): Record<string, unknown>[];
  /** A change for an existing item. */
  change: Record<string, unknown>;
  /** Another change, applied after it. */
  later: Record<string, unknown>;
}

const RESOURCES: Resource[] = [
  {
    key: 'lead',
    path: '/leads',
    items: (n) => [{ name: `Ada ${n}`, email: `ada.${n}@example.com`, externalId: `l-${n}-1`, tier: 'gold' }, { name: `Grace ${n}`, externalId: `l-${n}-2` }],
    change: { status: 'CONTACTED', tier: 'silver' },
    later: { title: 'CTO' },
  },
  {
    key: 'account',
    path: '/accounts',
    items: (n) => [{ name: `Acme ${n}`, externalId: `a-${n}-1`, tier: 'gold' }, { name: `Initech ${n}`, externalId: `a-${n}-2` }],
    change: { industry: 'Tools', tier: 'silver' },
    later: { website: 'https://acme.example' },
  },
  {
    key: 'deal',
    path: '/deals',
    items: (n) => [{ name: `Renewal ${n}`, amount: '1200.00', currency: 'EUR', externalId: `d-${n}-1`, tier: 'gold' }, { name: `Upsell ${n}`, externalId: `d-${n}-2` }],
    change: { stage: 'proposal', tier: 'silver' },
    later: { amount: '1500.00', currency: 'EUR' },
  },
  {
    key: 'record',
    path: '/objects/gizmos/records',
    items: (n) => [{ title: `Widget ${n}`, size: 3, externalId: `r-${n}-1` }, { title: `Sprocket ${n}`, externalId: `r-${n}-2` }],
    change: { title: 'Widget v2', size: 4 },
    later: { title: 'Widget v3' },
  },
];

type Result = { index: number; status: number; etag?: string; error?: { code: string; message: string } } & Record<string, any>;

let unique = 0;
const next = () => `${Date.now().toString(36)}${(unique++).toString(36)}`;

describe.each(RESOURCES)('$key batches', (r) => {
  const post = async (body: unknown): Promise<Result[]> => {
    const res = await call(t.app, 'POST', `${r.path}/batch`, { auth: s.auth, body });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data.results;
  };
  const patch = async (items: unknown[]): Promise<Result[]> => {
    const res = await call(t.app, 'PATCH', `${r.path}/batch`, { auth: s.auth, body: { items } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data.results;
  };
  const getTag = async (id: string) => {
    const res = await call(t.app, 'GET', `${r.path}/${id}`, { auth: s.auth });
    expect(res.status).toBe(200);
    return res.headers.etag as string;
  };
  const expectTagsOfGets = async (results: Result[]) => {
    for (const result of results) {
      expect(result.etag, JSON.stringify(result)).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
      expect(result.etag).toBe(await getTag(result[r.key].id));
    }
  };

  it('created items (201) carry the ETag a following GET answers', async () => {
    const results = await post({ items: r.items(next()) });
    expect(results.map((x) => x.status)).toEqual([201, 201]);
    await expectTagsOfGets(results);
  });

  it('upsert hits (200) carry the ETag of the updated item, and it works as ifMatch in a following PATCH batch', async () => {
    const items = r.items(next());
    await post({ items });
    const upserted = await post({ upsertBy: 'externalId', items: items.map((item) => ({ ...item, ...r.change })) });
    expect(upserted.map((x) => x.status)).toEqual([200, 200]);
    await expectTagsOfGets(upserted);

    const patched = await patch(upserted.map((x) => ({ id: x[r.key].id, ifMatch: x.etag, ...r.later })));
    expect(patched.map((x) => x.status), JSON.stringify(patched)).toEqual([200, 200]);
    await expectTagsOfGets(patched);
  });

  it('PATCH batch results carry the new ETag: ifMatch with it applies, with the one before is 412 carrying the current tag', async () => {
    const created = await post({ items: r.items(next()) });
    const first = await patch(created.map((x) => ({ id: x[r.key].id, ifMatch: x.etag, ...r.change })));
    expect(first.map((x) => x.status), JSON.stringify(first)).toEqual([200, 200]);
    await expectTagsOfGets(first);
    for (const [k, x] of first.entries()) expect(x.etag).not.toBe(created[k]!.etag);

    const stale = await patch(created.map((x) => ({ id: x[r.key].id, ifMatch: x.etag, ...r.later })));
    expect(stale.map((x) => x.status)).toEqual([412, 412]);
    expect(stale.map((x) => x.error!.code)).toEqual(['PRECONDITION_FAILED', 'PRECONDITION_FAILED']);
    expect(stale.map((x) => x.etag)).toEqual(first.map((x) => x.etag));

    const retried = await patch(stale.map((x) => ({ id: x[r.key].id, ifMatch: x.etag, ...r.later })));
    expect(retried.map((x) => x.status)).toEqual([200, 200]);
    await expectTagsOfGets(retried);
  });

  it('ifMatch on an item that matches nothing is 412 saying there is no version to compare, not that one is returned', async () => {
    const [fresh] = r.items(next());
    for (const body of [{ items: [{ ...fresh, ifMatch: '"a-tag"' }] }, { upsertBy: 'externalId', items: [{ ...fresh, ifMatch: '*' }] }]) {
      const [result] = await post(body);
      expect(result!.status).toBe(412);
      expect(result![r.key]).toBeUndefined();
      expect(result!.error!.message).toMatch(/^ifMatch names a version, but (without upsertBy an item only creates|no \w+ holds this externalId): nothing was written/);
    }
  });

  it('an item without its resource (400, 404) has no etag', async () => {
    const results = await patch([{ id: 'ffffffffffffffffffffffff', ...r.later }, { ...r.later }]);
    expect(results.map((x) => [x.status, x.etag])).toEqual([[404, undefined], [400, undefined]]);
  });
});

describe('leads written in bulk', () => {
  it('a PATCH batch that changes contacts (each lead alone) and one that does not (in one statement) both carry the tags of GET', async () => {
    const n = next();
    const created = await call(t.app, 'POST', '/leads/batch', { auth: s.auth, body: { items: [{ name: `Bulk ${n}` }, { name: `Alone ${n}` }] } });
    const [bulk, alone] = created.body.data.results as Result[];
    const res = await call(t.app, 'PATCH', '/leads/batch', {
      auth: s.auth,
      body: { items: [{ id: bulk!.lead.id, ifMatch: bulk!.etag, status: 'QUALIFIED' }, { id: alone!.lead.id, ifMatch: alone!.etag, email: `alone.${n}@example.com`, tier: 'bronze' }] },
    });
    const results = res.body.data.results as Result[];
    expect(results.map((x) => x.status)).toEqual([200, 200]);
    for (const x of results) expect(x.etag).toBe((await call(t.app, 'GET', `/leads/${x.lead.id}`, { auth: s.auth })).headers.etag);
  });

  it('an upsert by e-mail replayed with its Idempotency-Key answers the same tags', async () => {
    const n = next();
    const body = { upsertBy: 'email', items: [{ name: `Replay ${n}`, email: `replay.${n}@example.com` }] };
    const headers = { 'idempotency-key': `etag-replay-${n}` };
    const first = await call(t.app, 'POST', '/leads/batch', { auth: s.auth, body, headers });
    const again = await call(t.app, 'POST', '/leads/batch', { auth: s.auth, body, headers });
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.data.results[0].etag).toBe(first.body.data.results[0].etag);
    expect(first.body.data.results[0].etag).toBe((await call(t.app, 'GET', `/leads/${first.body.data.results[0].lead.id}`, { auth: s.auth })).headers.etag);
  });
});

describe('the OpenAPI document', () => {
  it('documents `etag` on the results of every batch route', async () => {
    const doc = (await call(t.app, 'GET', '/api/public/v1/openapi.json')).body;
    for (const path of ['/leads/batch', '/accounts/batch', '/deals/batch', '/objects/{object}/records/batch']) {
      for (const method of ['post', 'patch']) {
        const data = doc.paths[`/api/public/v1${path}`][method].responses['200'].content['application/json'].schema.properties.data;
        expect(data.properties.results.items.properties.etag, `${method} ${path}`).toMatchObject({ type: 'string', description: expect.stringContaining('ETag') });
      }
    }
  });
});
