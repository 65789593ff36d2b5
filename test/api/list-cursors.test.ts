import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { addUser, seedOrg, type Seeded } from '../helpers/seed.js';
import { call, expectError } from '../helpers/http.js';
import { ManualClock } from '../../src/lib/clock.js';

/*
 * Cursor pagination, sort and time filters (contract §8) on the lists of leads, accounts and deals: one set of
 * black-box checks run against each resource.
 */

const clock = new ManualClock('2026-11-01T00:00:00.000Z');
let t: TestApp;
let org: Seeded;
let other: Seeded;

beforeAll(async () => {
  t = await buildTestApp({ clock, env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  org = await seedOrg(t.ctx, { rateLimitPerMinute: 100_000 });
  other = await seedOrg(t.ctx);
});
afterAll(() => t.close());

type Item = { id: string; name: string; createdAt: string; updatedAt: string };
const RESOURCES = [
  { path: '/leads', key: 'leads' },
  { path: '/accounts', key: 'accounts' },
  { path: '/deals', key: 'deals' },
] as const;

const list = (path: string, qs: string, who: Seeded = org) => call(t.app, 'GET', `${path}${qs ? `?${qs}` : ''}`, { auth: who.auth });

/** Every item of a cursor walk, following nextCursor from the first page. */
async function walk(path: string, key: string, qs: string, limit = 3, who: Seeded = org): Promise<Item[]> {
  const seen: Item[] = [];
  let res = await list(path, `${qs}&limit=${limit}`, who);
  for (;;) {
    expect(res.status).toBe(200);
    seen.push(...(res.body.data[key] as Item[]));
    const next = res.body.data.pagination.nextCursor as string | null;
    if (next === null) return seen;
    res = await list(path, `${qs}&limit=${limit}&after=${encodeURIComponent(next)}`, who);
    expect(res.body.data.pagination).not.toHaveProperty('total');
    expect(res.body.data.pagination).not.toHaveProperty('page');
  }
}

const compare = (field: 'name' | 'createdAt' | 'updatedAt', desc: boolean) => (a: Item & { n: number }, b: Item & { n: number }) => {
  const c = a[field] < b[field] ? -1 : a[field] > b[field] ? 1 : a.n - b.n;
  return desc ? -c : c;
};

describe.each(RESOURCES)('$path: cursors, sort and time filters', ({ path, key }) => {
  const made: (Item & { n: number })[] = [];

  beforeAll(async () => {
    // Names repeat (ties break on creation order) and times differ; some are updated later, out of order.
    const names = ['delta', 'alpha', 'charlie', 'alpha', 'bravo', 'echo', 'bravo', 'foxtrot', 'alpha', 'golf', 'hotel'];
    for (const [n, name] of names.entries()) {
      clock.advance(1000);
      const res = await call(t.app, 'POST', path, { auth: org.auth, body: { name } });
      expect(res.status).toBe(201);
      made.push({ ...(res.body.data[key.slice(0, -1)] as Item), n });
    }
    for (const i of [2, 0, 7]) {
      clock.advance(1000);
      const res = await call(t.app, 'PATCH', `${path}/${made[i]!.id}`, { auth: org.auth, body: { name: `${made[i]!.name}2` } });
      expect(res.status).toBe(200);
      made[i] = { ...(res.body.data[key.slice(0, -1)] as Item), n: i };
    }
  });

  it.each([
    ['-createdAt', 'createdAt', true],
    ['createdAt', 'createdAt', false],
    ['-updatedAt', 'updatedAt', true],
    ['updatedAt', 'updatedAt', false],
    ['name', 'name', false],
    ['-name', 'name', true],
  ] as const)('sort=%s: a cursor walk returns every item once, in order, the same order as pages', async (sort, field, desc) => {
    const expected = [...made].sort(compare(field, desc)).map((i) => i.id);
    const walked = await walk(path, key, `sort=${sort}`);
    expect(walked.map((i) => i.id)).toEqual(expected);
    const paged = [];
    for (let page = 1; page <= 4; page++) paged.push(...((await list(path, `sort=${sort}&limit=3&page=${page}`)).body.data[key] as Item[]));
    expect(paged.map((i) => i.id)).toEqual(expected);
  });

  it('defaults to -createdAt (newest first); page mode counts and also returns nextCursor', async () => {
    const res = await list(path, 'limit=4');
    expect(res.body.data[key].map((i: Item) => i.id)).toEqual([...made].reverse().slice(0, 4).map((i) => i.id));
    expect(res.body.data.pagination).toMatchObject({ page: 1, limit: 4, total: 11, totalPages: 3, hasMore: true });
    const next = await list(path, `limit=4&after=${res.body.data.pagination.nextCursor}`);
    expect(next.body.data[key].map((i: Item) => i.id)).toEqual([...made].reverse().slice(4, 8).map((i) => i.id));
    expect(next.body.data.pagination).toEqual({ limit: 4, hasMore: true, nextCursor: expect.any(String) });
    const last = await list(path, 'limit=4&page=3');
    expect(last.body.data.pagination).toMatchObject({ hasMore: false, nextCursor: null });
  });

  it('filters on creation and change times (strictly after / before), also while walking', async () => {
    const from = made[3]!.createdAt;
    const to = made[8]!.createdAt;
    const res = await list(path, `createdAfter=${from}&createdBefore=${to}&sort=createdAt`);
    expect(res.body.data[key].map((i: Item) => i.id)).toEqual(made.slice(4, 8).map((i) => i.id));
    const changed = await walk(path, key, `updatedAfter=${made[10]!.createdAt}`, 1);
    expect(changed.map((i) => i.id).sort()).toEqual([made[0]!.id, made[2]!.id, made[7]!.id].sort());
    const before = await list(path, `updatedBefore=${made[1]!.updatedAt}`);
    expect(before.body.data[key].map((i: Item) => i.id)).toEqual([]);
    const inParis = new Date(Date.parse(made[4]!.createdAt) + 3_600_000).toISOString().replace('Z', '+01:00');
    const offset = await list(path, `createdAfter=${encodeURIComponent(inParis)}&sort=createdAt`);
    expect(offset.body.data[key][0].id).toBe(made[5]!.id);
  });

  it('an item inserted while paging neither repeats nor hides an item that existed at the start', async () => {
    const before = new Set(made.map((i) => i.id));
    const seen: string[] = [];
    for (const sort of ['-createdAt', 'name']) {
      seen.length = 0;
      let res = await list(path, `sort=${sort}&limit=2`);
      for (let round = 0; ; round++) {
        seen.push(...res.body.data[key].map((i: Item) => i.id));
        const next = res.body.data.pagination.nextCursor;
        if (next === null) break;
        clock.advance(10);
        // New items land before, inside and after the walked range.
        await call(t.app, 'POST', path, { auth: org.auth, body: { name: ['aaa', 'charlie', 'zulu'][round % 3] } });
        res = await list(path, `sort=${sort}&limit=2&after=${next}`);
      }
      expect(new Set(seen).size).toBe(seen.length);
      for (const id of before) expect(seen).toContain(id);
    }
  });

  it('refuses a malformed cursor, a cursor of another sort, and after with a page, naming the parameter', async () => {
    const first = await list(path, 'limit=2&sort=name');
    const cursor = first.body.data.pagination.nextCursor as string;
    expect(expectError(await list(path, 'after=not-a-cursor'), 400, 'VALIDATION_FAILED')[0]!.field).toBe('after');
    expect(expectError(await list(path, `after=${cursor}`), 400, 'VALIDATION_FAILED')[0]!.field).toBe('after');
    expect(expectError(await list(path, `after=${cursor}&sort=name&page=2`), 400, 'VALIDATION_FAILED')[0]!.field).toBe('page');
    const forged = Buffer.from(JSON.stringify(['name', { x: 1 }, 3])).toString('base64url');
    expect(expectError(await list(path, `after=${forged}&sort=name`), 400, 'VALIDATION_FAILED')[0]!.field).toBe('after');
  });

  it('refuses unknown parameters, unknown sorts and bad instants, naming them', async () => {
    expect(expectError(await list(path, 'createdSince=2026-01-01T00:00:00Z'), 400, 'VALIDATION_FAILED')[0]!.field).toBe('createdSince');
    expect(expectError(await list(path, 'sort=-seq'), 400, 'VALIDATION_FAILED')[0]!.field).toBe('sort');
    expect(expectError(await list(path, 'createdAfter=yesterday'), 400, 'VALIDATION_FAILED')[0]!.field).toBe('createdAfter');
    expect(expectError(await list(path, 'updatedBefore=2026-11-01T10:00:00'), 400, 'VALIDATION_FAILED')[0]!.field).toBe('updatedBefore');
  });

  it("a cursor is sealed for the caller's organization: another organization's walk cannot use it", async () => {
    const first = await list(path, 'limit=2');
    const res = await list(path, `limit=2&after=${first.body.data.pagination.nextCursor}`, other);
    expect(expectError(res, 400, 'VALIDATION_FAILED')[0]).toMatchObject({ field: 'after', code: 'invalid_cursor' });
  });

  it('walks the trash with cursors, newest deletion first', async () => {
    for (const i of [4, 1, 9]) {
      clock.advance(1000);
      expect((await call(t.app, 'DELETE', `${path}/${made[i]!.id}`, { auth: org.auth })).status).toBe(200);
    }
    const trash = await walk(path, key, 'deleted=true', 2);
    expect(trash.map((i) => i.id)).toEqual([9, 1, 4].map((i) => made[i]!.id));
    const live = await walk(path, key, 'sort=createdAt', 4);
    expect(live.map((i) => i.id)).not.toContain(made[4]!.id);
  });
});

describe('resource filters', () => {
  it('leads: status, source, sourceCampaign, ownerId and accountId, combined with a cursor walk', async () => {
    const o = await seedOrg(t.ctx);
    const owner = await addUser(t.ctx, o.orgId);
    const account = (await call(t.app, 'POST', '/accounts', { auth: o.auth, body: { name: 'Acme' } })).body.data.account.id as string;
    const bodies = [
      { name: 'a', status: 'QUALIFIED', source: 'WEBSITE', sourceCampaign: 'spring', ownerId: owner },
      { name: 'b', status: 'NEW', source: 'WEBSITE', sourceCampaign: 'autumn', accountId: account },
      { name: 'c', status: 'QUALIFIED', source: 'EVENT', sourceCampaign: 'spring', ownerId: owner, accountId: account },
    ];
    const ids = [];
    for (const body of bodies) ids.push((await call(t.app, 'POST', '/leads', { auth: o.auth, body })).body.data.lead.id as string);
    const names = async (qs: string) => ((await call(t.app, 'GET', `/leads?${qs}`, { auth: o.auth })).body.data.leads as Item[]).map((l) => l.name);
    expect(await names('status=QUALIFIED')).toEqual(['c', 'a']);
    expect(await names('source=WEBSITE&sort=name')).toEqual(['a', 'b']);
    expect(await names('sourceCampaign=spring&source=EVENT')).toEqual(['c']);
    expect(await names(`ownerId=${owner}&sort=createdAt`)).toEqual(['a', 'c']);
    expect(await names(`accountId=${account}`)).toEqual(['c', 'b']);
    const page = await call(t.app, 'GET', '/leads?status=QUALIFIED&limit=1', { auth: o.auth });
    const next = await call(t.app, 'GET', `/leads?status=QUALIFIED&limit=1&after=${page.body.data.pagination.nextCursor}`, { auth: o.auth });
    expect(next.body.data.leads.map((l: Item) => l.name)).toEqual(['a']);
    expect(next.body.data.pagination.nextCursor).toBeNull();
    expect(expectError(await call(t.app, 'GET', '/leads?status=WON', { auth: o.auth }), 400, 'VALIDATION_FAILED')[0]!.field).toBe('status');
  });
});

describe('the other lists: objects, webhooks, deliveries, erasures', () => {
  /** Walks a list with cursors; returns the ids in order and checks they match page mode. */
  async function walkIds(path: string, key: string, who: Seeded): Promise<string[]> {
    const ids: string[] = [];
    let res = await call(t.app, 'GET', `${path}?limit=2`, { auth: who.auth });
    for (;;) {
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      ids.push(...res.body.data[key].map((x: { id?: string; slug?: string }) => x.id ?? x.slug));
      const next = res.body.data.pagination.nextCursor;
      if (next === null) break;
      res = await call(t.app, 'GET', `${path}?limit=2&after=${next}`, { auth: who.auth });
      expect(res.body.data.pagination).not.toHaveProperty('total');
    }
    const all = await call(t.app, 'GET', `${path}?limit=100`, { auth: who.auth });
    expect(ids).toEqual(all.body.data[key].map((x: { id?: string; slug?: string }) => x.id ?? x.slug));
    expect(expectError(await call(t.app, 'GET', `${path}?after=xyz`, { auth: who.auth }), 400, 'VALIDATION_FAILED')[0]!.field).toBe('after');
    return ids;
  }

  it('each walks newest first with after/nextCursor, like its pages', async () => {
    const o = await seedOrg(t.ctx, { rateLimitPerMinute: 100_000 });
    for (const slug of ['one', 'two', 'three', 'four', 'five']) {
      clock.advance(1000);
      expect((await call(t.app, 'POST', '/objects', { auth: o.auth, body: { slug, name: slug } })).status).toBe(201);
    }
    // The built-in resources (custom fields on leads, accounts and deals) follow the custom objects, once, on the last page.
    expect(await walkIds('/objects', 'objects', o)).toEqual(['five', 'four', 'three', 'two', 'one', 'leads', 'accounts', 'deals']);
    const hooks = [];
    for (let i = 0; i < 3; i++) hooks.push((await call(t.app, 'POST', '/webhooks', { auth: o.auth, body: { url: `http://127.0.0.1:9/hook${i}`, events: ['*'] } })).body.data.webhook.id);
    expect(await walkIds('/webhooks', 'webhooks', o)).toEqual([...hooks].reverse());
    for (let i = 0; i < 5; i++) expect((await call(t.app, 'POST', `/webhooks/${hooks[0]}/test`, { auth: o.auth })).status).toBeLessThan(300);
    expect(await walkIds(`/webhooks/${hooks[0]}/deliveries`, 'deliveries', o)).toHaveLength(5);
    for (const email of ['a@example.com', 'b@example.com', 'c@example.com']) {
      expect((await call(t.app, 'POST', '/privacy/erasures', { auth: o.auth, body: { email } })).status).toBe(201);
    }
    expect(await walkIds('/privacy/erasures', 'erasures', o)).toHaveLength(3);
    const recent = await call(t.app, 'GET', `/objects?createdAfter=${encodeURIComponent(clock.now().toISOString().replace(/T.*/, 'T00:00:00Z'))}&limit=100`, { auth: o.auth });
    expect(recent.body.data.objects).toHaveLength(5);
  });
});

describe("the logs: a webhook's deliveries and erasure receipts, in creation order", () => {
  /** Both orders, by page and by cursor: every item once, the same sequence both ways; a cursor keeps to its sort. Returns a cursor of `sort=createdAt`. */
  async function checkSorts(path: string, key: string, made: string[], who: Seeded) {
    for (const [sort, expected] of [['-createdAt', [...made].reverse()], ['createdAt', made]] as const) {
      expect((await walk(path, key, `sort=${sort}`, 2, who)).map((i) => i.id), sort).toEqual(expected);
      const paged: string[] = [];
      for (let page = 1; page <= 3; page++) paged.push(...(await list(path, `sort=${sort}&limit=2&page=${page}`, who)).body.data[key].map((i: Item) => i.id));
      expect(paged, sort).toEqual(expected);
    }
    expect((await list(path, 'limit=100', who)).body.data[key].map((i: Item) => i.id)).toEqual([...made].reverse());
    const oldestFirst = await list(path, 'sort=createdAt&limit=1', who);
    const cursor = oldestFirst.body.data.pagination.nextCursor as string;
    expect(expectError(await list(path, `after=${cursor}`, who), 400, 'VALIDATION_FAILED')[0]).toMatchObject({ field: 'after', code: 'invalid_cursor' });
    expect((await list(path, `sort=createdAt&limit=1&after=${cursor}`, who)).body.data[key][0].id).toBe(made[1]);
    return cursor;
  }

  /** Names the refused parameter of each query. */
  async function refused(path: string, who: Seeded, queries: Record<string, string>) {
    for (const [qs, field] of Object.entries(queries)) expect(expectError(await list(path, qs, who), 400, 'VALIDATION_FAILED')[0]!.field, qs).toBe(field);
  }

  it("deliveries: sort either way, creation and change times as strict bounds, with status and cursors", async () => {
    const o = await seedOrg(t.ctx, { rateLimitPerMinute: 100_000 });
    const hook = (await call(t.app, 'POST', '/webhooks', { auth: o.auth, body: { url: 'http://127.0.0.1:9/log', events: ['*'] } })).body.data.webhook.id as string;
    const path = `/webhooks/${hook}/deliveries`;
    const made: Item[] = [];
    for (let i = 0; i < 5; i++) {
      clock.advance(1000);
      const res = await call(t.app, 'POST', `/webhooks/${hook}/test`, { auth: o.auth });
      expect(res.status).toBe(201);
      made.push(res.body.data.delivery);
    }
    // Re-sent out of creation order (3, then 0): each is changed, the others keep their creation time.
    const resent: Item[] = [];
    for (const i of [3, 0]) {
      clock.advance(1000);
      const res = await call(t.app, 'POST', `${path}/${made[i]!.id}/retry`, { auth: o.auth });
      expect(res.status).toBe(200);
      resent.push(res.body.data.delivery);
    }
    expect(resent.map((d) => d.updatedAt)).toEqual([...resent.map((d) => d.updatedAt)].sort());
    await checkSorts(path, 'deliveries', made.map((d) => d.id), o);
    const ids = async (qs: string) => (await list(path, qs, o)).body.data.deliveries.map((d: Item) => d.id);
    expect(await ids(`createdAfter=${made[1]!.createdAt}&createdBefore=${made[4]!.createdAt}&sort=createdAt`)).toEqual([made[2]!.id, made[3]!.id]);
    expect(await ids(`updatedAfter=${made[4]!.createdAt}`)).toEqual([made[3]!.id, made[0]!.id]);
    expect(await ids(`updatedAfter=${resent[0]!.updatedAt}`)).toEqual([made[0]!.id]);
    expect(await ids(`updatedBefore=${made[2]!.createdAt}`)).toEqual([made[1]!.id]);
    expect(await ids(`status=PENDING&createdBefore=${made[1]!.createdAt}`)).toEqual([made[0]!.id]);
    expect(await ids(`status=SUCCEEDED&updatedAfter=${made[4]!.createdAt}`)).toEqual([]);
    const changed = await walk(path, 'deliveries', `sort=createdAt&updatedAfter=${made[4]!.createdAt}`, 1, o);
    expect(changed.map((d) => d.id)).toEqual([made[0]!.id, made[3]!.id]);
    const inParis = new Date(Date.parse(made[2]!.createdAt) + 3_600_000).toISOString().replace('Z', '+01:00');
    expect(await ids(`createdAfter=${encodeURIComponent(inParis)}&sort=createdAt`)).toEqual([made[3]!.id, made[4]!.id]);
    await refused(path, o, {
      'sort=-updatedAt': 'sort',
      'sort=name': 'sort',
      'createdAfter=yesterday': 'createdAfter',
      'createdBefore=2026-11-01T10:00:00': 'createdBefore',
      'updatedAfter=2026-13-01T00:00:00Z': 'updatedAfter',
      'updatedBefore=': 'updatedBefore',
      'changedSince=2026-11-01T00:00:00Z': 'changedSince',
    });
  });

  it('erasures: sort either way, creation times (completedAt) as strict bounds, no updated bounds', async () => {
    const o = await seedOrg(t.ctx, { rateLimitPerMinute: 100_000 });
    const made: (Item & { completedAt: string })[] = [];
    for (const email of ['a@example.com', 'b@example.com', 'c@example.com', 'd@example.com']) {
      clock.advance(1000);
      const res = await call(t.app, 'POST', '/privacy/erasures', { auth: o.auth, body: { email } });
      expect(res.status).toBe(201);
      made.push(res.body.data.erasure);
    }
    const cursor = await checkSorts('/privacy/erasures', 'erasures', made.map((e) => e.id), o);
    expect(expectError(await list('/privacy/erasures', `sort=createdAt&after=${cursor}`, other), 400, 'VALIDATION_FAILED')[0]).toMatchObject({ field: 'after', code: 'invalid_cursor' });
    const ids = async (qs: string) => (await list('/privacy/erasures', qs, o)).body.data.erasures.map((e: Item) => e.id);
    expect(await ids(`createdAfter=${made[0]!.completedAt}&createdBefore=${made[3]!.completedAt}`)).toEqual([made[2]!.id, made[1]!.id]);
    expect(await ids(`createdAfter=${made[3]!.completedAt}`)).toEqual([]);
    expect(await ids(`createdBefore=${made[1]!.completedAt}&sort=createdAt`)).toEqual([made[0]!.id]);
    const walked = await walk('/privacy/erasures', 'erasures', `createdAfter=${made[0]!.completedAt}&sort=createdAt`, 1, o);
    expect(walked.map((e) => e.id)).toEqual(made.slice(1).map((e) => e.id));
    await refused('/privacy/erasures', o, {
      [`updatedAfter=${made[0]!.completedAt}`]: 'updatedAfter',
      [`updatedBefore=${made[0]!.completedAt}`]: 'updatedBefore',
      'sort=-updatedAt': 'sort',
      'createdAfter=last-week': 'createdAfter',
      'createdBefore=2026-11-01': 'createdBefore',
    });
  });
});
