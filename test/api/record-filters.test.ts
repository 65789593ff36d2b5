import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { listCursors } from '../../src/crypto/list-cursors.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call, expectError } from '../helpers/http.js';

/*
 * Records: filter[<field>] equality and filter[<field>][gte|lte|gt|lt] ranges through the shared record_values
 * index, sort on date and number fields, cursors (contract §8).
 */

let t: TestApp;
let a: Seeded;
let b: Seeded;
const clock = new ManualClock('2026-03-01T12:00:00.000Z');

const FIELDS = [
  { key: 'title', label: 'Title', type: 'text' },
  { key: 'notes', label: 'Notes', type: 'long_text' },
  { key: 'priority', label: 'Priority', type: 'select', options: ['low', 'high'] },
  { key: 'score', label: 'Score', type: 'number' },
  { key: 'done', label: 'Done', type: 'boolean' },
  { key: 'visit_date', label: 'Visit', type: 'date' },
  { key: 'seen_at', label: 'Seen', type: 'datetime' },
  { key: 'mail', label: 'Mail', type: 'email' },
  { key: 'backup_mail', label: 'Backup mail', type: 'email' },
  { key: 'phone', label: 'Phone', type: 'phone' },
];

type Rec = { id: string; title: string; score: number | null; visit_date: string | null };
const ROWS = [
  { title: 'alpha', priority: 'low', score: 5, done: true, visit_date: '2026-01-10', seen_at: '2026-01-10T08:00:00Z', mail: 'Ann@Example.com', phone: '+14155550100' },
  { title: 'bravo', priority: 'high', score: 12.5, done: false, visit_date: '2026-02-01', seen_at: '2026-02-01T09:30:00+01:00', backup_mail: 'ann@example.com' },
  { title: 'charlie', priority: 'high', score: -3, visit_date: '2026-02-15', mail: 'bob@example.com' },
  { title: 'delta', score: 12.5, done: true, seen_at: '2026-03-01T00:00:00Z' },
  { title: 'alpha', priority: 'low', visit_date: '2026-01-10', phone: '+1 415 555 0101' },
  { title: 'x'.repeat(300), score: 0, done: false, visit_date: '2025-12-31' },
];
const ids: string[] = [];

beforeAll(async () => {
  t = await buildTestApp({ clock });
  a = await seedOrg(t.ctx, { rateLimitPerMinute: 100_000 });
  b = await seedOrg(t.ctx);
  for (const who of [a, b]) expect((await call(t.app, 'POST', '/objects', { auth: who.auth, body: { slug: 'visits', name: 'Visits', fields: FIELDS } })).status).toBe(201);
  for (const row of ROWS) {
    clock.advance(1000);
    const res = await call(t.app, 'POST', '/objects/visits/records', { auth: a.auth, body: row });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    ids.push(res.body.data.record.id);
  }
  // The other organization holds the same values: never listed here.
  for (const row of ROWS.slice(0, 3)) expect((await call(t.app, 'POST', '/objects/visits/records', { auth: b.auth, body: row })).status).toBe(201);
});
afterAll(() => t.close());

const list = (qs: string, who: Seeded = a) => call(t.app, 'GET', `/objects/visits/records?${qs}`, { auth: who.auth });
const idsOf = async (qs: string) => {
  const res = await list(qs);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return (res.body.data.records as Rec[]).map((r) => ids.indexOf(r.id));
};
const q = (params: Record<string, string>) => new URLSearchParams({ sort: 'createdAt', ...params }).toString();

describe('filter[field] on records', () => {
  it.each([
    [{ 'filter[priority]': 'high' }, [1, 2]],
    [{ 'filter[done]': 'true' }, [0, 3]],
    [{ 'filter[done]': 'false' }, [1, 5]],
    [{ 'filter[title]': 'alpha' }, [0, 4]],
    [{ 'filter[title]': 'x'.repeat(300) }, [5]],
    [{ 'filter[title]': 'x'.repeat(299) }, []],
    [{ 'filter[score]': '12.5' }, [1, 3]],
    [{ 'filter[score][gte]': '0' }, [0, 1, 3, 5]],
    [{ 'filter[score][gt]': '0', 'filter[score][lt]': '12.5' }, [0]],
    [{ 'filter[score][lte]': '0' }, [2, 5]],
    [{ 'filter[visit_date][gte]': '2026-01-10', 'filter[visit_date][lte]': '2026-02-01' }, [0, 1, 4]],
    [{ 'filter[visit_date]': '2026-01-10' }, [0, 4]],
    [{ 'filter[visit_date][lt]': '2026-01-01' }, [5]],
    [{ 'filter[seen_at][gte]': '2026-02-01T08:30:00Z' }, [1, 3]],
    [{ 'filter[seen_at][gt]': '2026-02-01T09:30:00+01:00' }, [3]],
    [{ 'filter[mail]': 'ANN@example.com' }, [0]],
    [{ 'filter[backup_mail]': 'ann@example.com' }, [1]],
    [{ 'filter[phone]': '+1 415-555-0101' }, [4]],
    [{ 'filter[priority]': 'low', 'filter[visit_date]': '2026-01-10', 'filter[done]': 'true' }, [0]],
  ] as const)('%j → records %j', async (params, expected) => {
    expect(await idsOf(q(params))).toEqual(expected);
  });

  it('combines with cursors, q, stage-less objects and the time ranges', async () => {
    const first = await list(q({ 'filter[score][gte]': '0', limit: '2' }));
    expect(first.body.data.pagination).toMatchObject({ total: 4, hasMore: true });
    const next = await list(q({ 'filter[score][gte]': '0', limit: '2', after: first.body.data.pagination.nextCursor }));
    expect(next.body.data.records.map((r: Rec) => ids.indexOf(r.id))).toEqual([3, 5]);
    expect(next.body.data.pagination.nextCursor).toBeNull();
    expect(await idsOf(q({ 'filter[priority]': 'low', q: 'alph' }))).toEqual([0, 4]);
    expect(await idsOf(q({ 'filter[done]': 'false', createdAfter: '2026-03-01T12:00:03.000Z' }))).toEqual([5]);
  });

  it('follows updates and leaves trashed records out', async () => {
    const res = await call(t.app, 'PATCH', `/objects/visits/records/${ids[2]}`, { auth: a.auth, body: { priority: 'low', score: null } });
    expect(res.status).toBe(200);
    expect(await idsOf(q({ 'filter[priority]': 'high' }))).toEqual([1]);
    expect(await idsOf(q({ 'filter[score][lte]': '0' }))).toEqual([5]);
    expect((await call(t.app, 'DELETE', `/objects/visits/records/${ids[1]}`, { auth: a.auth })).status).toBe(200);
    expect(await idsOf(q({ 'filter[score]': '12.5' }))).toEqual([3]);
    expect(await idsOf(q({ 'filter[score]': '12.5', deleted: 'true' }))).toEqual([1]);
    expect((await call(t.app, 'POST', `/objects/visits/records/${ids[1]}/restore`, { auth: a.auth })).status).toBe(200);
    expect(await idsOf(q({ 'filter[score]': '12.5' }))).toEqual([1, 3]);
  });

  it('a permanent delete takes the record\'s values with it', async () => {
    const res = await call(t.app, 'POST', '/objects/visits/records', { auth: a.auth, body: { title: 'gone', score: 999 } });
    expect(await idsOf(q({ 'filter[score]': '999' }))).toEqual([-1]);
    expect((await call(t.app, 'DELETE', `/objects/visits/records/${res.body.data.record.id}?permanent=true`, { auth: a.auth })).status).toBe(200);
    expect(await idsOf(q({ 'filter[score]': '999' }))).toEqual([]);
    const left = await t.ctx.database.db.selectFrom('record_values').select('record_seq').where('num_value', '=', 999).execute();
    expect(left).toEqual([]);
  });

  it('refuses unknown fields, unfilterable fields, wrong operators and bad values, naming the parameter', async () => {
    const cases: [Record<string, string>, string, string][] = [
      [{ 'filter[nope]': 'x' }, 'filter[nope]', 'unknown_field'],
      [{ 'filter[notes]': 'x' }, 'filter[notes]', 'not_filterable'],
      [{ 'filter[title][gte]': 'a' }, 'filter[title][gte]', 'invalid_operator'],
      [{ 'filter[score][between]': '1' }, 'filter[score][between]', 'unknown_operator'],
      [{ 'filter[score][eq]': '1' }, 'filter[score][eq]', 'unknown_operator'],
      [{ 'filter[score]': 'ten' }, 'filter[score]', 'invalid_value'],
      [{ 'filter[done]': 'yes' }, 'filter[done]', 'invalid_value'],
      [{ 'filter[priority]': 'medium' }, 'filter[priority]', 'invalid_value'],
      [{ 'filter[visit_date][gte]': '2026-13-01' }, 'filter[visit_date][gte]', 'invalid_value'],
      [{ 'filter[seen_at][lt]': '2026-01-01T10:00:00' }, 'filter[seen_at][lt]', 'invalid_value'],
      [{ 'filter[mail]': 'not-an-email' }, 'filter[mail]', 'invalid_value'],
      [{ sort: 'title' }, 'sort', 'invalid_value'],
      [{ sort: '-nope' }, 'sort', 'invalid_value'],
    ];
    for (const [params, field, code] of cases) {
      const errors = expectError(await list(new URLSearchParams(params).toString()), 400, 'VALIDATION_FAILED');
      expect(errors[0], JSON.stringify(params)).toMatchObject({ field, code });
    }
    // Sealed as the server seals, but holding a value of another type (a cursor of another object's `score`).
    const forged = (value: unknown) => listCursors(t.ctx, a.orgId).seal({ sort: 'score', value: value as string, seq: 1 });
    for (const value of ['abc', true, { a: 1 }]) {
      expect(expectError(await list(`sort=score&after=${forged(value)}`), 400, 'VALIDATION_FAILED')[0]!.field).toBe('after');
    }
    expect((await list(`sort=score&after=${forged(null)}`)).status).toBe(200);
    expect(expectError(await list(`sort=createdAt&after=${listCursors(t.ctx, a.orgId).seal({ sort: 'createdAt', value: 5, seq: 1 })}`), 400, 'VALIDATION_FAILED')[0]!.field).toBe('after');
    for (const param of ['filter=x', 'filter[]=x', 'filters[score]=1', 'filter[score][gte][x]=1']) {
      expectError(await list(param), 400, 'VALIDATION_FAILED');
    }
  });
});

describe('sort on date and number fields', () => {
  it.each([
    ['score', [2, 5, 0, 1, 3], [4]],
    ['-score', [3, 1, 0, 5, 2], [4]],
    ['visit_date', [5, 0, 4, 1, 2], [3]],
    ['-visit_date', [2, 1, 4, 0, 5], [3]],
  ] as const)('sort=%s: valued records in order (ties by creation), unset ones last descending / first ascending; cursor walk agrees', async (sort, valued, unset) => {
    await call(t.app, 'PATCH', `/objects/visits/records/${ids[2]}`, { auth: a.auth, body: { score: -3 } });
    const expected = sort.startsWith('-') ? [...valued, ...unset] : [...unset, ...valued];
    expect(await idsOf(new URLSearchParams({ sort }).toString())).toEqual(expected);
    const walked: number[] = [];
    let res = await list(new URLSearchParams({ sort, limit: '2' }).toString());
    for (;;) {
      walked.push(...res.body.data.records.map((r: Rec) => ids.indexOf(r.id)));
      const next = res.body.data.pagination.nextCursor;
      if (!next) break;
      res = await list(new URLSearchParams({ sort, limit: '2', after: next }).toString());
      expect(res.status).toBe(200);
    }
    expect(walked).toEqual(expected);
  });
});
