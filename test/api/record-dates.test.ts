import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call, expectError } from '../helpers/http.js';

let t: TestApp;
let a: Seeded;
const clock = new ManualClock('2026-03-01T12:00:00.000Z');

const FIELDS = [
  { key: 'title', label: 'Title', type: 'text' },
  { key: 'due_on', label: 'Due on', type: 'date', role: 'due' },
  { key: 'other_day', label: 'Other day', type: 'date' },
  { key: 'at', label: 'At', type: 'datetime' },
];

async function defineProjects(who: Seeded) {
  const res = await call(t.app, 'POST', '/objects', { auth: who.auth, body: { slug: 'tasks', name: 'Tasks', fields: FIELDS } });
  expect(res.status).toBe(201);
}

beforeAll(async () => {
  t = await buildTestApp({ clock });
  a = await seedOrg(t.ctx);
  await defineProjects(a);
});
afterAll(() => t.close());

const create = (body: unknown, who: Seeded = a) => call(t.app, 'POST', '/objects/tasks/records', { auth: who.auth, body });

describe('date-only fields (contract rules 1 and 2)', () => {
  const cases: [string, string][] = [
    ['2026-03-01', '2026-03-01T00:00:00.000Z'],
    ['2024-02-29', '2024-02-29T00:00:00.000Z'],
    ['2026-03-01T15:00:00Z', '2026-03-02T00:00:00.000Z'],
    ['2026-03-01T11:59:59Z', '2026-03-01T00:00:00.000Z'],
    ['2026-03-01T11:59:59.999Z', '2026-03-01T00:00:00.000Z'],
    ['2026-03-01T12:00:00.000Z', '2026-03-02T00:00:00.000Z'],
    ['2026-03-01T23:30:00-05:00', '2026-03-02T00:00:00.000Z'],
    ['2026-03-02T01:00:00+14:00', '2026-03-01T00:00:00.000Z'],
    ['2026-12-31T12:00:00Z', '2027-01-01T00:00:00.000Z'],
    ['2024-02-28T18:00:00Z', '2024-02-29T00:00:00.000Z'],
  ];
  for (const [input, expected] of cases) {
    it(`${input} → ${expected}, on create, read and patch`, async () => {
      const created = await create({ title: input, due_on: input, other_day: input });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      expect(created.body.data.record).toMatchObject({ due_on: expected, other_day: expected });
      const id = created.body.data.record.id;
      expect((await call(t.app, 'GET', `/objects/tasks/records/${id}`, { auth: a.auth })).body.data.record.due_on).toBe(expected);
      const patched = await call(t.app, 'PATCH', `/objects/tasks/records/${id}`, { auth: a.auth, body: { other_day: '2000-01-01', due_on: input } });
      expect(patched.body.data.record).toMatchObject({ due_on: expected, other_day: '2000-01-01T00:00:00.000Z' });
      const stored = await t.ctx.database.db.selectFrom('records').select(['data', 'due_date']).where('id', '=', id).executeTakeFirstOrThrow();
      expect(stored.due_date).toBe(expected.slice(0, 10));
      expect(JSON.parse(stored.data)).toMatchObject({ due_on: expected.slice(0, 10), other_day: '2000-01-01' });
    });
  }

  it('refuses impossible dates and forms, naming every bad field', async () => {
    for (const bad of ['2026-02-30', '2025-02-29', '2026-13-01', '2026-00-10', '2026-3-1', '01/03/2026', '2026-03-01T10:00:00', '2026-03-01T24:00:00Z', '0000-01-01', 'tomorrow', '']) {
      const errors = expectError(await create({ due_on: bad, other_day: bad }), 400, 'VALIDATION_FAILED');
      expect(errors.map((e) => [e.field, e.code]).sort(), bad).toEqual([['due_on', 'invalid_date'], ['other_day', 'invalid_date']]);
    }
    expect(expectError(await create({ due_on: 20260301 }), 400, 'VALIDATION_FAILED')[0]).toMatchObject({ field: 'due_on', code: 'invalid_type' });
  });
});

describe('datetime fields', () => {
  it('keeps the instant and answers it in UTC with milliseconds', async () => {
    const cases: [string, string][] = [
      ['2026-03-01T10:00:00Z', '2026-03-01T10:00:00.000Z'],
      ['2026-03-01T10:00:00.5+01:00', '2026-03-01T09:00:00.500Z'],
      ['2026-03-01T23:30-05:00', '2026-03-02T04:30:00.000Z'],
      ['2026-03-01T10:00:00.123456Z', '2026-03-01T10:00:00.123Z'],
      ['2026-03-01T10:00:00+0530', '2026-03-01T04:30:00.000Z'],
    ];
    for (const [input, expected] of cases) {
      const res = await create({ at: input });
      expect(res.body.data.record.at, input).toBe(expected);
    }
  });

  it('refuses a timestamp without offset, impossible instants and other forms', async () => {
    for (const bad of ['2026-03-01T10:00:00', '2026-03-01', '2026-02-30T10:00:00Z', '2026-03-01T25:00:00Z', '2026-03-01T10:00:00+25:00', 'now', '1772359200000']) {
      expect(expectError(await create({ at: bad }), 400, 'VALIDATION_FAILED')[0], bad).toMatchObject({ field: 'at', code: 'invalid_format' });
    }
  });
});

describe('overdue (contract rule 3: the organization\'s local date)', () => {
  async function orgWithDueRecords(timezone: string) {
    const who = await seedOrg(t.ctx, { timezone });
    await defineProjects(who);
    const ids: Record<string, string> = {};
    for (const due of ['2026-02-28', '2026-03-01', '2026-03-02']) ids[due] = (await create({ title: due, due_on: due }, who)).body.data.record.id;
    await create({ title: 'no due date' }, who);
    return { who, ids };
  }
  const overdue = async (who: Seeded) => {
    const res = await call(t.app, 'GET', '/objects/tasks/records?overdue=true', { auth: who.auth });
    expect(res.status).toBe(200);
    return res.body.data.records.map((r: { title: string }) => r.title).sort();
  };

  it('is overdue once the local date is after the due day, per time zone', async () => {
    clock.set('2026-03-01T12:00:00.000Z');
    const auckland = await orgWithDueRecords('Pacific/Auckland'); // local 2026-03-02 01:00
    const losAngeles = await orgWithDueRecords('America/Los_Angeles'); // local 2026-03-01 04:00
    expect(await overdue(auckland.who)).toEqual(['2026-02-28', '2026-03-01']);
    expect(await overdue(losAngeles.who)).toEqual(['2026-02-28']);
  });

  it('turns at local midnight, not UTC midnight', async () => {
    const paris = await orgWithDueRecords('Europe/Paris');
    clock.set('2026-03-01T22:59:59.999Z'); // 23:59:59.999 in Paris
    expect(await overdue(paris.who)).toEqual(['2026-02-28']);
    clock.set('2026-03-01T23:00:00.000Z'); // midnight in Paris, still 1 March in UTC
    expect(await overdue(paris.who)).toEqual(['2026-02-28', '2026-03-01']);
  });

  it('pages and counts exactly', async () => {
    clock.set('2026-03-05T12:00:00.000Z');
    const utc = await orgWithDueRecords('UTC');
    const res = await call(t.app, 'GET', '/objects/tasks/records?overdue=true&limit=2', { auth: utc.who.auth });
    expect(res.body.data.pagination).toEqual({ page: 1, limit: 2, total: 3, totalPages: 2, hasMore: true, nextCursor: expect.any(String) });
    const notOverdue = await call(t.app, 'GET', '/objects/tasks/records?overdue=false', { auth: utc.who.auth });
    expect(notOverdue.body.data.pagination.total).toBe(4);
  });

  it('is refused on an object without a due field', async () => {
    await call(t.app, 'POST', '/objects', { auth: a.auth, body: { slug: 'plain', name: 'Plain', fields: [{ key: 'day', label: 'Day', type: 'date' }] } });
    const errors = expectError(await call(t.app, 'GET', '/objects/plain/records?overdue=true', { auth: a.auth }), 400, 'VALIDATION_FAILED');
    expect(errors[0]).toMatchObject({ field: 'overdue' });
  });
});
