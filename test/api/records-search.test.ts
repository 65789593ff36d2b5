import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call, expectError } from '../helpers/http.js';

let t: TestApp;
let a: Seeded;
let b: Seeded;
const clock = new ManualClock('2026-06-15T12:00:00.000Z');

const FIELDS = [
  { key: 'name', label: 'Name', type: 'text' },
  { key: 'notes', label: 'Notes', type: 'long_text' },
  { key: 'email', label: 'E-mail', type: 'email' },
  { key: 'kind', label: 'Kind', type: 'select', options: ['searchable-option'] },
  { key: 'due_on', label: 'Due', type: 'date', role: 'due' },
];
const STAGES = [{ key: 'new', label: 'New' }, { key: 'won', label: 'Won' }, { key: 'wont', label: 'Won\'t' }];

// [name, notes, stage, due]
const RECORDS: [string, string | null, string, string | null][] = [
  ['Grace Hopper', 'Compiler pioneer', 'new', '2026-06-01'],
  ['Grace Kelly', 'Actress', 'won', null],
  ['Alan Turing', 'Enigma\nBletchley', 'won', '2026-06-10'],
  ['Al Green', null, 'wont', null],
  ['O\'Brien "Bob" 100%_sure\\', 'quotes', 'new', null],
  ['Zoë Ärger', 'ÜBER straße', 'won', '2026-07-01'],
  ['Qx', 'ab', 'new', null],
];

async function seed(who: Seeded) {
  await call(t.app, 'POST', '/objects', { auth: who.auth, body: { slug: 'people', name: 'People', fields: FIELDS, stages: STAGES } });
  await call(t.app, 'POST', '/objects', { auth: who.auth, body: { slug: 'others', name: 'Others', fields: [{ key: 'name', label: 'Name', type: 'text' }] } });
  for (const [name, notes, stage, due] of RECORDS) {
    const res = await call(t.app, 'POST', '/objects/people/records', { auth: who.auth, body: { name, notes, stage, due_on: due, email: `${name.length}@grace-mail.example`, kind: 'searchable-option' } });
    expect(res.status).toBe(201);
  }
  await call(t.app, 'POST', '/objects/others/records', { auth: who.auth, body: { name: 'Grace in another object' } });
}

beforeAll(async () => {
  t = await buildTestApp({ clock });
  a = await seedOrg(t.ctx);
  b = await seedOrg(t.ctx);
  await seed(a);
  await call(t.app, 'POST', '/objects', { auth: b.auth, body: { slug: 'people', name: 'People', fields: FIELDS, stages: STAGES } });
  await call(t.app, 'POST', '/objects/people/records', { auth: b.auth, body: { name: 'Grace of org B' } });
});
afterAll(() => t.close());

const list = async (qs: string, who: Seeded = a) => {
  const res = await call(t.app, 'GET', `/objects/people/records?${qs}`, { auth: who.auth });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
};
const names = async (qs: string, who: Seeded = a) => (await list(qs, who)).records.map((r: { name: string }) => r.name);
const q = (text: string, extra = '') => `q=${encodeURIComponent(text)}${extra}`;

describe('q: case-insensitive substring of the text and long_text fields', () => {
  it('finds three characters and more in any case, newest first, with an exact total', async () => {
    expect(await names(q('GRACE'))).toEqual(['Grace Kelly', 'Grace Hopper']);
    expect(await names(q('urin'))).toEqual(['Alan Turing']);
    expect(await names(q('pioneer'))).toEqual(['Grace Hopper']);
    expect(await names(q('zoë'))).toEqual(['Zoë Ärger']);
    expect(await names(q('über'))).toEqual(['Zoë Ärger']);
    expect((await list(q('grace'))).pagination).toEqual({ page: 1, limit: 25, total: 2, totalPages: 1, hasMore: false, nextCursor: null });
  });

  it('finds one and two characters, including at the end of a value', async () => {
    expect(await names(q('Al'))).toEqual(['Al Green', 'Alan Turing']);
    expect(await names(q('qx'))).toEqual(['Qx']);
    expect(await names(q('ab'))).toEqual(['Qx']);
    expect(await names(q('ß'))).toEqual(['Zoë Ärger']);
    expect(await names(q('X'))).toEqual(['Qx']);
    expect((await list(q('e'))).pagination.total).toBe(6);
    expect(await names(q('zz'))).toEqual([]);
    expect(await names(q('ж'))).toEqual([]);
  });

  it('never matches across two fields, nor the fields that are not text', async () => {
    expect(await names(q('hopper compiler'))).toEqual([]);
    expect(await names(q('enigma bletchley'))).toEqual(['Alan Turing']);
    expect(await names(q('grace-mail'))).toEqual([]);
    expect(await names(q('searchable-option'))).toEqual([]);
    expect(await names(q('2026'))).toEqual([]);
  });

  it('treats SQL and FTS syntax literally', async () => {
    expect(await names(q('100%_sure\\'))).toEqual(['O\'Brien "Bob" 100%_sure\\']);
    expect(await names(q('"bob"'))).toEqual(['O\'Brien "Bob" 100%_sure\\']);
    expect(await names(q('%'))).toEqual(['O\'Brien "Bob" 100%_sure\\']);
    expect(await names(q('"'))).toEqual(['O\'Brien "Bob" 100%_sure\\']);
    expect(await names(q('Grace OR Alan'))).toEqual([]);
    for (const text of ['*', 'NEAR', 'a*', '^Gr', "' or 1=1 --", '\\', 'name : grace', '(', 'AND']) {
      await list(q(text));
    }
  });

  it('ignores surrounding blanks and treats a blank q as no filter', async () => {
    expect(await names(q('  turing '))).toEqual(['Alan Turing']);
    expect((await list(q('   '))).pagination.total).toBe(RECORDS.length);
  });

  it('searches one object of one organization only', async () => {
    expect(await names(q('grace'), b)).toEqual(['Grace of org B']);
    const others = await call(t.app, 'GET', `/objects/others/records?${q('grace')}`, { auth: a.auth });
    expect(others.body.data.records.map((r: { name: string }) => r.name)).toEqual(['Grace in another object']);
  });
});

describe('stage, q + stage, q + overdue', () => {
  it('narrows by exact stage ("won" is not "wont")', async () => {
    expect(await names('stage=won')).toEqual(['Zoë Ärger', 'Alan Turing', 'Grace Kelly']);
    expect(await names('stage=wont')).toEqual(['Al Green']);
    expect(await names(q('grace', '&stage=won'))).toEqual(['Grace Kelly']);
    expect(await names(q('al', '&stage=wont'))).toEqual(['Al Green']);
    expect(await names(q('e', '&stage=won'))).toEqual(['Zoë Ärger', 'Alan Turing', 'Grace Kelly']);
    expect((await list(q('an', '&stage=won'))).pagination.total).toBe(1);
  });

  it('refuses an unknown stage, naming the allowed keys', async () => {
    const errors = expectError(await call(t.app, 'GET', '/objects/people/records?stage=lost', { auth: a.auth }), 400, 'VALIDATION_FAILED');
    expect(errors[0]).toMatchObject({ field: 'stage', message: 'must be one of: new, won, wont' });
  });

  it('combines q with overdue (local today 2026-06-15)', async () => {
    expect(await names(q('grace', '&overdue=true'))).toEqual(['Grace Hopper']);
    expect(await names(q('r', '&overdue=true&stage=won'))).toEqual(['Alan Turing']);
    expect((await list(q('r', '&overdue=true'))).pagination.total).toBe(2);
  });

  it('pages through matches with an exact total', async () => {
    const first = await list(q('e', '&limit=4'));
    const second = await list(q('e', '&limit=4&page=2'));
    expect(first.pagination).toEqual({ page: 1, limit: 4, total: 6, totalPages: 2, hasMore: true, nextCursor: expect.any(String) });
    expect(second.pagination).toMatchObject({ page: 2, hasMore: false });
    const all = [...first.records, ...second.records].map((r: { id: string }) => r.id);
    expect(new Set(all).size).toBe(6);
  });

  it('follows updates of the text and the stage', async () => {
    const created = await call(t.app, 'POST', '/objects/people/records', { auth: a.auth, body: { name: 'Temporary Zebra', stage: 'new' } });
    const id = created.body.data.record.id;
    expect(await names(q('zebra', '&stage=new'))).toEqual(['Temporary Zebra']);
    await call(t.app, 'PATCH', `/objects/people/records/${id}`, { auth: a.auth, body: { name: 'Permanent Yak', stage: 'won' } });
    expect(await names(q('zebra'))).toEqual([]);
    expect(await names(q('yak', '&stage=new'))).toEqual([]);
    expect(await names(q('yak', '&stage=won'))).toEqual(['Permanent Yak']);
    await call(t.app, 'PATCH', `/objects/people/records/${id}`, { auth: a.auth, body: { name: null } });
    expect(await names(q('yak'))).toEqual([]);
  });

  it('refuses bad paging and unknown parameters', async () => {
    for (const qs of ['limit=0', 'limit=101', 'page=0', 'overdue=maybe', 'sort=name', `q=${'x'.repeat(201)}`]) {
      expectError(await call(t.app, 'GET', `/objects/people/records?${qs}`, { auth: a.auth }), 400, 'VALIDATION_FAILED');
    }
  });

  it('answers 404 for another organization\'s or an unknown object', async () => {
    const o = await seedOrg(t.ctx);
    expectError(await call(t.app, 'GET', '/objects/others/records', { auth: o.auth }), 404, 'NOT_FOUND');
    expectError(await call(t.app, 'GET', '/objects/nope/records?q=grace', { auth: a.auth }), 404, 'NOT_FOUND');
  });
});
