import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { addUser, seedOrg, type Seeded } from '../helpers/seed.js';
import { call, expectError } from '../helpers/http.js';
import { ManualClock } from '../../src/lib/clock.js';

/*
 * Cursor pagination, sort and filters (contract §8) on the lists of notes, tasks and users, in the style of
 * list-cursors.test.ts: every walk returns every item once, in the order of page mode, also while items are
 * inserted; each list's own filters combine with a walk.
 */

const clock = new ManualClock('2026-11-01T00:00:00.000Z');
let t: TestApp;
let org: Seeded;
let other: Seeded;
let lead: string;
let account: string;

beforeAll(async () => {
  t = await buildTestApp({ clock });
  org = await seedOrg(t.ctx, { rateLimitPerMinute: 100_000 });
  other = await seedOrg(t.ctx);
  lead = (await call(t.app, 'POST', '/leads', { auth: org.auth, body: { name: 'Target lead' } })).body.data.lead.id;
  account = (await call(t.app, 'POST', '/accounts', { auth: org.auth, body: { name: 'Target account' } })).body.data.account.id;
});
afterAll(() => t.close());

type Item = { id: string; createdAt: string; updatedAt: string; name?: string; dueDate?: string | null; n: number };

const list = (path: string, qs: string, who: Seeded = org) => call(t.app, 'GET', `${path}?${qs}`, { auth: who.auth });

/** Every item of a cursor walk, following nextCursor from the first page; cursor pages never count. */
async function walk(path: string, key: string, qs: string, limit = 3): Promise<Item[]> {
  const seen: Item[] = [];
  let res = await list(path, `${qs}&limit=${limit}`);
  for (;;) {
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    seen.push(...(res.body.data[key] as Item[]));
    const next = res.body.data.pagination.nextCursor as string | null;
    if (next === null) return seen;
    res = await list(path, `${qs}&limit=${limit}&after=${encodeURIComponent(next)}`);
    expect(res.body.data.pagination).not.toHaveProperty('total');
  }
}

/** Every item through page mode, `limit` at a time. */
async function pages(path: string, key: string, qs: string, limit = 3): Promise<Item[]> {
  const seen: Item[] = [];
  for (let page = 1; ; page++) {
    const res = await list(path, `${qs}&limit=${limit}&page=${page}`);
    seen.push(...(res.body.data[key] as Item[]));
    if (!res.body.data.pagination.hasMore) return seen;
  }
}

/** The expected order of a sort: the value (undated tasks as the last day), ties in creation order. */
function ordered(items: Item[], sort: string): string[] {
  const desc = sort.startsWith('-');
  const field = sort.replace(/^-/, '') as 'createdAt' | 'updatedAt' | 'name' | 'dueDate';
  const value = (i: Item) => (field === 'dueDate' ? (i.dueDate ?? '9999-12-31') : i[field]!);
  return [...items]
    .sort((a, b) => {
      const c = value(a) < value(b) ? -1 : value(a) > value(b) ? 1 : a.n - b.n;
      return desc ? -c : c;
    })
    .map((i) => i.id);
}

const ids = (items: Item[]) => items.map((i) => i.id);

interface ListCase {
  path: string;
  key: string;
  sorts: string[];
  /** Makes the n-th item (a later one when `n` is past the seed), with the clock already advanced. */
  make(n: number): Promise<Item>;
  /** Changes the item (a new updatedAt). */
  touch(item: Item): Promise<Item>;
}

const LISTS: ListCase[] = [
  {
    path: '/notes',
    key: 'notes',
    sorts: ['-createdAt', 'createdAt', '-updatedAt', 'updatedAt'],
    async make(n) {
      const target = n % 2 === 0 ? { object: 'lead', id: lead } : { object: 'account', id: account };
      const res = await call(t.app, 'POST', '/notes', { auth: org.auth, body: { target, body: `Note ${n}` } });
      expect(res.status).toBe(201);
      return { ...res.body.data.note, n };
    },
    async touch(item) {
      const res = await call(t.app, 'PATCH', `/notes/${item.id}`, { auth: org.auth, body: { body: `Edited ${item.n}` } });
      return { ...res.body.data.note, n: item.n };
    },
  },
  {
    path: '/tasks',
    key: 'tasks',
    sorts: ['-createdAt', 'createdAt', '-updatedAt', 'updatedAt', 'dueDate', '-dueDate'],
    async make(n) {
      // Due days repeat and some tasks have none: the sort's ties and its undated tail.
      const days = ['2026-12-03', null, '2026-12-01', '2026-12-03', null, '2026-11-20'];
      const dueDate = days[n % days.length];
      const res = await call(t.app, 'POST', '/tasks', { auth: org.auth, body: { title: `Task ${n}`, ...(dueDate ? { dueDate } : {}) } });
      expect(res.status).toBe(201);
      return { ...res.body.data.task, n };
    },
    async touch(item) {
      const res = await call(t.app, 'PATCH', `/tasks/${item.id}`, { auth: org.auth, body: { title: `Task ${item.n} (edited)` } });
      return { ...res.body.data.task, n: item.n };
    },
  },
];

describe.each(LISTS)('$path: cursors, sort and time filters', (c) => {
  const made: Item[] = [];

  beforeAll(async () => {
    for (let n = 0; n < 11; n++) {
      clock.advance(1000);
      made.push(await c.make(n));
    }
    for (const i of [2, 0, 7]) {
      clock.advance(1000);
      made[i] = await c.touch(made[i]!);
    }
  });

  it('every sort: a cursor walk returns every item once, in order, the same order as pages', async () => {
    for (const sort of c.sorts) {
      const expected = ordered(made, sort);
      expect(ids(await walk(c.path, c.key, `sort=${sort}`)), sort).toEqual(expected);
      expect(ids(await pages(c.path, c.key, `sort=${sort}`)), sort).toEqual(expected);
    }
  });

  it('defaults to -createdAt; page mode counts and also returns nextCursor', async () => {
    const res = await list(c.path, 'limit=4');
    expect(ids(res.body.data[c.key])).toEqual(ids([...made].reverse().slice(0, 4)));
    expect(res.body.data.pagination).toMatchObject({ page: 1, limit: 4, total: 11, totalPages: 3, hasMore: true });
    const next = await list(c.path, `limit=4&after=${res.body.data.pagination.nextCursor}`);
    expect(ids(next.body.data[c.key])).toEqual(ids([...made].reverse().slice(4, 8)));
  });

  it('filters on creation and change times, also while walking', async () => {
    const res = await list(c.path, `createdAfter=${made[3]!.createdAt}&createdBefore=${made[8]!.createdAt}&sort=createdAt`);
    expect(ids(res.body.data[c.key])).toEqual(ids(made.slice(4, 8)));
    const changed = await walk(c.path, c.key, `updatedAfter=${made[10]!.createdAt}`, 1);
    expect(ids(changed).sort()).toEqual([made[0]!.id, made[2]!.id, made[7]!.id].sort());
  });

  it('an item inserted while paging neither repeats nor hides an item that existed at the start', async () => {
    for (const sort of c.sorts) {
      const before = ids(await pages(c.path, c.key, `sort=${sort}`, 100));
      const seen: string[] = [];
      let res = await list(c.path, `sort=${sort}&limit=2`);
      for (let round = 0; ; round++) {
        seen.push(...ids(res.body.data[c.key]));
        const next = res.body.data.pagination.nextCursor;
        if (next === null) break;
        clock.advance(10);
        made.push(await c.make(100 + made.length));
        res = await list(c.path, `sort=${sort}&limit=2&after=${next}`);
      }
      expect(new Set(seen).size, sort).toBe(seen.length);
      for (const id of before) expect(seen, sort).toContain(id);
    }
  });

  it('refuses unknown parameters, unknown sorts, bad instants and foreign cursors, naming them', async () => {
    const field = async (qs: string) => expectError(await list(c.path, qs), 400, 'VALIDATION_FAILED')[0]!.field;
    expect(await field('createdSince=2026-01-01T00:00:00Z')).toBe('createdSince');
    expect(await field('sort=name')).toBe('sort');
    expect(await field('createdAfter=yesterday')).toBe('createdAfter');
    expect(await field('after=not-a-cursor')).toBe('after');
    const cursor = (await list(c.path, 'limit=1&sort=createdAt')).body.data.pagination.nextCursor;
    expect(await field(`after=${cursor}`)).toBe('after');
    // Sealed for this organization: another one's walk cannot open it.
    expect(expectError(await list(c.path, `limit=2&sort=createdAt&after=${cursor}`, other), 400, 'VALIDATION_FAILED')[0]).toMatchObject({ field: 'after', code: 'invalid_cursor' });
  });

  it('walks the trash with cursors, newest deletion first', async () => {
    for (const i of [4, 1, 9]) {
      clock.advance(1000);
      expect((await call(t.app, 'DELETE', `${c.path}/${made[i]!.id}`, { auth: org.auth })).status).toBe(200);
    }
    expect(ids(await walk(c.path, c.key, 'deleted=true', 2))).toEqual([9, 1, 4].map((i) => made[i]!.id));
    expect(ids(await walk(c.path, c.key, 'sort=createdAt', 4))).not.toContain(made[4]!.id);
  });
});

describe('resource filters with a walk', () => {
  it('notes: targetObject and targetId', async () => {
    const o = await seedOrg(t.ctx);
    const mine = (await call(t.app, 'POST', '/leads', { auth: o.auth, body: { name: 'L' } })).body.data.lead.id;
    const deal = (await call(t.app, 'POST', '/deals', { auth: o.auth, body: { name: 'D' } })).body.data.deal.id;
    const made: string[] = [];
    for (const target of [{ object: 'lead', id: mine }, { object: 'deal', id: deal }, { object: 'lead', id: mine }]) {
      clock.advance(1000);
      made.push((await call(t.app, 'POST', '/notes', { auth: o.auth, body: { target, body: 'x' } })).body.data.note.id);
    }
    const walked = async (qs: string) => ids(await walkAs(o, '/notes', 'notes', qs));
    expect(await walked(`targetId=${mine}`)).toEqual([made[2], made[0]]);
    expect(await walked('targetObject=deal&sort=createdAt')).toEqual([made[1]]);
    expect(expectError(await list('/notes', 'targetObject=planet', o), 400, 'VALIDATION_FAILED')[0]!.field).toBe('targetObject');
  });

  it('tasks: status, assigneeId, target, due range (date-only, exclusive), overdue, sorted by due day', async () => {
    const o = await seedOrg(t.ctx);
    const rep = await addUser(t.ctx, o.orgId);
    const mine = (await call(t.app, 'POST', '/leads', { auth: o.auth, body: { name: 'L' } })).body.data.lead.id;
    const bodies = [
      { title: 'a', dueDate: '2026-10-20', assigneeId: rep },
      { title: 'b', dueDate: '2026-11-05', target: { object: 'lead', id: mine } },
      { title: 'c', dueDate: '2026-11-10', assigneeId: rep, status: 'done' },
      { title: 'd', assigneeId: rep, target: { object: 'lead', id: mine } },
      { title: 'e', dueDate: '2026-10-25' },
    ];
    for (const body of bodies) {
      clock.advance(1000);
      expect((await call(t.app, 'POST', '/tasks', { auth: o.auth, body })).status).toBe(201);
    }
    const titles = async (qs: string) => (await walkAs(o, '/tasks', 'tasks', qs)).map((x) => (x as unknown as { title: string }).title);
    expect(await titles(`assigneeId=${rep}&sort=dueDate`)).toEqual(['a', 'c', 'd']);
    expect(await titles(`assigneeId=${rep}&status=open&sort=-dueDate`)).toEqual(['d', 'a']);
    expect(await titles(`targetId=${mine}&sort=createdAt`)).toEqual(['b', 'd']);
    expect(await titles('targetObject=lead&sort=dueDate')).toEqual(['b', 'd']);
    expect(await titles('dueAfter=2026-10-20&dueBefore=2026-11-10&sort=dueDate')).toEqual(['e', 'b']);
    // The clock is early in November 2026 (UTC organization): a and e are overdue, b not yet, c is done.
    expect(await titles('overdue=true&sort=dueDate')).toEqual(['a', 'e']);
    expect(expectError(await list('/tasks', 'dueBefore=tomorrow', o), 400, 'VALIDATION_FAILED')[0]!.field).toBe('dueBefore');
    expect(expectError(await list('/tasks', 'status=later', o), 400, 'VALIDATION_FAILED')[0]!.field).toBe('status');
  });

  it('users: role, active, sort by name, time filters, walked with cursors', async () => {
    const o = await seedOrg(t.ctx);
    const owner = (await call(t.app, 'GET', '/users', { auth: o.auth })).body.data.users[0];
    const reps: string[] = [];
    for (const name of ['Zoe', 'Ada', 'Max', 'Ada']) {
      clock.advance(1000);
      reps.push(await addUser(t.ctx, o.orgId, name));
    }
    const walked = async (qs: string) => ids(await walkAs(o, '/users', 'users', qs, 2));
    expect(await walked('sort=createdAt')).toEqual([owner.id, ...reps]);
    expect(await walked('')).toEqual([...reps].reverse().concat(owner.id));
    // The seeded key's user is named "Owner …": between Max and Zoe by name.
    const byName = [reps[1], reps[3], reps[2], owner.id, reps[0]];
    expect(await walked('sort=name')).toEqual(byName);
    expect(await walked('role=member&sort=name')).toEqual(byName.filter((id) => id !== owner.id || owner.role === 'member'));
    expect(await walked('role=admin')).toEqual(owner.role === 'admin' ? [owner.id] : []);
    expect(await walked('active=true&sort=-name')).toHaveLength(5);
    expect(await walked('active=false')).toEqual([]);
    const created = (await call(t.app, 'GET', `/users/${reps[1]}`, { auth: o.auth })).body.data.user.createdAt;
    expect(await walked(`createdAfter=${created}&sort=createdAt`)).toEqual(reps.slice(2));
    expect(expectError(await list('/users', 'role=owner', o), 400, 'VALIDATION_FAILED')[0]!.field).toBe('role');
    expect(expectError(await list('/users', 'sort=email', o), 400, 'VALIDATION_FAILED')[0]!.field).toBe('sort');
  });
});

/** A cursor walk as another organization, checked against page mode. */
async function walkAs(who: Seeded, path: string, key: string, qs: string, limit = 1): Promise<Item[]> {
  const seen: Item[] = [];
  let res = await list(path, `${qs}&limit=${limit}`, who);
  for (;;) {
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    seen.push(...(res.body.data[key] as Item[]));
    const next = res.body.data.pagination.nextCursor;
    if (next === null) break;
    res = await list(path, `${qs}&limit=${limit}&after=${encodeURIComponent(next)}`, who);
  }
  const all = await list(path, `${qs}&limit=100`, who);
  expect(ids(seen)).toEqual(ids(all.body.data[key]));
  return seen;
}
