import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { addKey, seedOrg, type Seeded } from '../helpers/seed.js';
import { call, expectError } from '../helpers/http.js';
import { ManualClock } from '../../src/lib/clock.js';

let t: TestApp;
let a: Seeded;
let b: Seeded;

beforeAll(async () => {
  t = await buildTestApp();
  a = await seedOrg(t.ctx);
  b = await seedOrg(t.ctx);
});
afterAll(() => t.close());

const ALL_TYPES = [
  { key: 'title', label: 'Title', type: 'text', required: true },
  { key: 'notes', label: 'Notes', type: 'long_text' },
  { key: 'budget', label: 'Budget', type: 'number' },
  { key: 'active', label: 'Active', type: 'boolean' },
  { key: 'due_on', label: 'Due on', type: 'date', role: 'due' },
  { key: 'kickoff_at', label: 'Kickoff', type: 'datetime' },
  { key: 'priority', label: 'Priority', type: 'select', options: ['low', 'high'] },
  { key: 'contact_email', label: 'E-mail', type: 'email' },
  { key: 'contact_phone', label: 'Phone', type: 'phone' },
  { key: 'site', label: 'Site', type: 'url' },
];

const createObject = (who: Seeded, body: unknown, headers?: Record<string, string>) => call(t.app, 'POST', '/objects', { auth: who.auth, body, headers });
let counter = 0;
const slug = (base = 'obj') => `${base}_${++counter}`;

describe('POST /objects', () => {
  it('defines an object with every field type and stages, defaulting required to false', async () => {
    const res = await createObject(a, { slug: 'projects', name: ' Projects ', fields: ALL_TYPES, stages: [{ key: 'planned', label: 'Planned' }, { key: 'done', label: 'Done' }] });
    expect(res.status).toBe(201);
    const object = res.body.data.object;
    expect(object).toMatchObject({ slug: 'projects', name: 'Projects', stages: [{ key: 'planned', label: 'Planned' }, { key: 'done', label: 'Done' }] });
    expect(object.fields).toHaveLength(ALL_TYPES.length);
    expect(object.fields[0]).toEqual({ key: 'title', label: 'Title', type: 'text', required: true });
    expect(object.fields[1]).toEqual({ key: 'notes', label: 'Notes', type: 'long_text', required: false });
    expect(object.fields[4]).toEqual({ key: 'due_on', label: 'Due on', type: 'date', required: false, role: 'due' });
    expect(object.fields[6]).toEqual({ key: 'priority', label: 'Priority', type: 'select', required: false, options: ['low', 'high'] });
    expect(object.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(object.updatedAt).toBe(object.createdAt);
  });

  it('accepts an object without fields or stages', async () => {
    const res = await createObject(a, { slug: 'bare-bones', name: 'Bare' });
    expect(res.status).toBe(201);
    expect(res.body.data.object).toMatchObject({ fields: [], stages: [] });
  });

  it('refuses malformed slugs, keys and types, listing every bad field', async () => {
    const res = await createObject(a, {
      slug: 'Bad Slug',
      name: '',
      fields: [{ key: '1abc', label: 'X', type: 'money' }, { key: 'ok', label: 'Ok', type: 'text', extra: 1 }],
      stages: [{ key: 'Won', label: 'Won' }],
      color: 'red',
    });
    const errors = expectError(res, 400, 'VALIDATION_FAILED');
    expect(errors.map((e) => e.field).sort()).toEqual(['color', 'fields.0.key', 'fields.0.type', 'fields.1.extra', 'name', 'slug', 'stages.0.key']);
  });

  it('refuses reserved and duplicate keys, misplaced options and roles, duplicate stages — all at once', async () => {
    const res = await createObject(a, {
      slug: slug(),
      name: 'Rules',
      fields: [
        { key: 'id', label: 'Id', type: 'text' },
        { key: 'stage', label: 'Stage', type: 'text' },
        { key: 'name', label: 'Name', type: 'text' },
        { key: 'name', label: 'Name again', type: 'text' },
        { key: 'kind', label: 'Kind', type: 'select' },
        { key: 'size', label: 'Size', type: 'number', options: ['s'] },
        { key: 'when', label: 'When', type: 'datetime', role: 'due' },
        { key: 'd1', label: 'D1', type: 'date', role: 'due' },
        { key: 'd2', label: 'D2', type: 'date', role: 'due' },
      ],
      stages: [{ key: 'open', label: 'Open' }, { key: 'open', label: 'Again' }],
    });
    const errors = expectError(res, 400, 'VALIDATION_FAILED');
    expect(Object.fromEntries(errors.map((e) => [e.field, e.code]))).toEqual({
      'fields.0.key': 'reserved',
      'fields.1.key': 'reserved',
      'fields.3.key': 'duplicate',
      'fields.4.options': 'required',
      'fields.5.options': 'not_allowed',
      'fields.6.role': 'not_allowed',
      'fields.8.role': 'duplicate',
      'stages.1.key': 'duplicate',
    });
    expect(errors.find((e) => e.field === 'fields.0.key')!.message).toMatch(/reserved/);
  });

  it('refuses camel-case reserved keys, empty or repeated select options', async () => {
    const res = await createObject(a, {
      slug: slug(),
      name: 'Rules',
      fields: [
        { key: 'a', label: 'A', type: 'select', options: [] },
        { key: 'b', label: 'B', type: 'select', options: ['x', 'x'] },
      ],
    });
    const errors = expectError(res, 400, 'VALIDATION_FAILED');
    expect(errors.map((e) => e.field).sort()).toEqual(['fields.0.options', 'fields.1.options']);
    const reserved = expectError(await createObject(a, { slug: slug(), name: 'Rules', fields: [{ key: 'createdAt', label: 'C', type: 'text' }] }), 400, 'VALIDATION_FAILED');
    expect(reserved.map((e) => [e.field, e.code])).toEqual([['fields.0.key', 'reserved']]);
  });

  it('keeps select options in NFC: two spellings of one option are a duplicate, and a record may name it either way', async () => {
    const precomposed = 'Caf\u00e9';
    const combining = 'Cafe\u0301';
    const twice = expectError(await createObject(a, { slug: slug(), name: 'Twice', fields: [{ key: 'kind', label: 'Kind', type: 'select', options: [precomposed, combining] }] }), 400, 'VALIDATION_FAILED');
    expect(twice.map((e) => [e.field, e.code])).toEqual([['fields.0.options', 'duplicate']]);
    const created = await createObject(a, { slug: slug('venues'), name: 'Venues', fields: [{ key: 'kind', label: 'Kind', type: 'multi_select', options: [combining, 'Bar'] }, { key: 'main', label: 'Main', type: 'select', options: [combining] }] });
    expect(created.status).toBe(201);
    const object = created.body.data.object;
    expect(object.fields.map((f: { options: string[] }) => f.options)).toEqual([[precomposed, 'Bar'], [precomposed]]);
    const record = await call(t.app, 'POST', `/objects/${object.slug}/records`, { auth: a.auth, body: { kind: [combining], main: combining } });
    expect(record.status).toBe(201);
    expect(record.body.data.record).toMatchObject({ kind: [precomposed], main: precomposed });
    for (const spelling of [precomposed, combining]) {
      const found = await call(t.app, 'GET', `/objects/${object.slug}/records?filter[main]=${encodeURIComponent(spelling)}&filter[kind]=${encodeURIComponent(spelling)}`, { auth: a.auth });
      expect(found.status, JSON.stringify(found.body)).toBe(200);
      expect(found.body.data.records.map((r: { id: string }) => r.id)).toEqual([record.body.data.record.id]);
    }
  });

  it('keeps slugs unique per organization (409), not across organizations', async () => {
    const s = slug('dup');
    expect((await createObject(a, { slug: s, name: 'One' })).status).toBe(201);
    expectError(await createObject(a, { slug: s, name: 'Two' }), 409, 'CONFLICT');
    expect((await createObject(b, { slug: s, name: 'Other org' })).status).toBe(201);
  });

  it('replays an idempotent create instead of conflicting', async () => {
    const body = { slug: slug('idem'), name: 'Idem' };
    const first = await createObject(a, body, { 'idempotency-key': `obj-${body.slug}` });
    const again = await createObject(a, body, { 'idempotency-key': `obj-${body.slug}` });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
  });
});

describe('GET /objects and /objects/{slug}', () => {
  it('lists the organization\'s objects newest first with pagination, never another organization\'s', async () => {
    const o = await seedOrg(t.ctx);
    for (const s of ['first', 'second', 'third']) await createObject(o, { slug: s, name: s });
    const res = await call(t.app, 'GET', '/objects?limit=2', { auth: o.auth });
    expect(res.status).toBe(200);
    expect(res.body.data.objects.map((x: { slug: string }) => x.slug)).toEqual(['third', 'second']);
    expect(res.body.data.pagination).toEqual({ page: 1, limit: 2, total: 6, totalPages: 3, hasMore: true, nextCursor: expect.any(String) });
    const other = await call(t.app, 'GET', '/objects', { auth: b.auth });
    expect(other.body.data.objects.map((x: { slug: string }) => x.slug)).not.toContain('third');
  });

  it('lists the built-ins last, as members of the list: counted, within limit, once each by page and by cursor', async () => {
    const o = await seedOrg(t.ctx);
    for (const s of ['first', 'second', 'third']) await createObject(o, { slug: s, name: s });
    expect((await call(t.app, 'PATCH', '/objects/leads', { auth: o.auth, body: { fields: [{ key: 'tier', label: 'Tier', type: 'text' }] } })).status).toBe(200);
    const order = ['third', 'second', 'first', 'leads', 'accounts', 'deals'];
    const list = async (query: string) => {
      const res = await call(t.app, 'GET', `/objects?${query}`, { auth: o.auth });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return { slugs: res.body.data.objects.map((x: { slug: string }) => x.slug) as string[], pagination: res.body.data.pagination };
    };
    for (const limit of [1, 2, 3, 4, 6, 7]) {
      // Page mode: every page within limit, total counting the built-ins, nothing past the end.
      const totalPages = Math.ceil(order.length / limit);
      const byPage: string[] = [];
      for (let page = 1; page <= totalPages + 1; page++) {
        const { slugs, pagination } = await list(`limit=${limit}&page=${page}`);
        expect(slugs.length).toBeLessThanOrEqual(limit);
        expect(pagination).toMatchObject({ page, limit, total: order.length, totalPages, hasMore: page < totalPages });
        expect(pagination.nextCursor === null).toBe(page >= totalPages);
        if (page > totalPages) expect(slugs).toEqual([]);
        byPage.push(...slugs);
      }
      expect(byPage, `limit ${limit}`).toEqual(order);
      // Cursor mode: page 1, then nextCursor as after until it is null.
      const first = await list(`limit=${limit}`);
      const byCursor = [...first.slugs];
      let cursor: string | null = first.pagination.nextCursor;
      while (cursor !== null) {
        const next = await list(`limit=${limit}&after=${encodeURIComponent(cursor)}`);
        expect(next.slugs.length).toBeGreaterThan(0);
        expect(next.slugs.length).toBeLessThanOrEqual(limit);
        expect(next.pagination).toEqual({ limit, hasMore: next.pagination.nextCursor !== null, nextCursor: next.pagination.nextCursor });
        byCursor.push(...next.slugs);
        cursor = next.pagination.nextCursor;
        expect(byCursor.length).toBeLessThanOrEqual(order.length);
      }
      expect(byCursor, `limit ${limit}`).toEqual(order);
    }
    // The ranges filter the built-ins too, and total counts what they admit: accounts and deals have no
    // custom fields, so no time of their own (the epoch).
    const recent = await list('createdAfter=2000-01-01T00:00:00.000Z&limit=1&page=4');
    expect(recent.slugs).toEqual(['leads']);
    expect(recent.pagination).toMatchObject({ total: 4, totalPages: 4, hasMore: false, nextCursor: null });
    const old = await list('createdBefore=2000-01-01T00:00:00.000Z&limit=1');
    expect(old.slugs).toEqual(['accounts']);
    expect(old.pagination).toMatchObject({ total: 2, hasMore: true });
    const last = await list(`createdBefore=2000-01-01T00:00:00.000Z&limit=1&after=${encodeURIComponent(old.pagination.nextCursor)}`);
    expect(last).toEqual({ slugs: ['deals'], pagination: { limit: 1, hasMore: false, nextCursor: null } });
    expectError(await call(t.app, 'GET', `/objects?after=${Buffer.from(JSON.stringify(['-createdAt', 'projects', 0])).toString('base64url')}`, { auth: o.auth }), 400, 'VALIDATION_FAILED');
  });

  it('sorts the custom objects by createdAt, updatedAt or name, the built-ins after them under every sort, by page and by cursor', async () => {
    // A second app on the same database, on a clock the test moves: every create and change at its own second.
    const clock = new ManualClock('2026-11-01T00:00:00.000Z');
    const timed = await buildTestApp({ sameDatabaseAs: t, clock });
    try {
      const o = await seedOrg(timed.ctx, { rateLimitPerMinute: 100_000 });
      const as = (method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown) => call(timed.app, method, path, { auth: o.auth, body });
      // Names out of creation order, one tie (broken by creation order), and one named like a built-in's slug.
      const names = { one: 'delta', two: 'alpha', three: 'leads', four: 'alpha', five: 'bravo' };
      for (const [s, name] of Object.entries(names)) {
        clock.advance(1000);
        expect((await as('POST', '/objects', { slug: s, name })).status).toBe(201);
      }
      // Changes out of creation order; leads, changed in between, still keeps its place after the custom objects.
      for (const s of ['three', 'leads', 'one']) {
        clock.advance(1000);
        expect((await as('PATCH', `/objects/${s}`, { fields: [{ key: 'tier', label: 'Tier', type: 'text' }] })).status).toBe(200);
      }
      const builtIns = ['leads', 'accounts', 'deals'];
      const expected: Record<string, string[]> = {
        '-createdAt': ['five', 'four', 'three', 'two', 'one'],
        createdAt: ['one', 'two', 'three', 'four', 'five'],
        '-updatedAt': ['one', 'three', 'five', 'four', 'two'],
        updatedAt: ['two', 'four', 'five', 'three', 'one'],
        name: ['two', 'four', 'five', 'one', 'three'],
        '-name': ['three', 'one', 'five', 'four', 'two'],
      };
      const list = async (query: string) => {
        const res = await as('GET', `/objects?${query}`);
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        return { slugs: res.body.data.objects.map((x: { slug: string }) => x.slug) as string[], pagination: res.body.data.pagination };
      };
      for (const [sort, custom] of Object.entries(expected)) {
        const order = [...custom, ...builtIns];
        for (const limit of [1, 3]) {
          const byPage: string[] = [];
          for (let page = 1; ; page++) {
            const { slugs, pagination } = await list(`sort=${sort}&limit=${limit}&page=${page}`);
            expect(pagination.total).toBe(order.length);
            byPage.push(...slugs);
            if (!pagination.hasMore) break;
          }
          expect(byPage, `${sort} by page, limit ${limit}`).toEqual(order);
          const first = await list(`sort=${sort}&limit=${limit}`);
          const byCursor = [...first.slugs];
          for (let cursor = first.pagination.nextCursor; cursor !== null; ) {
            const next = await list(`sort=${sort}&limit=${limit}&after=${encodeURIComponent(cursor)}`);
            byCursor.push(...next.slugs);
            expect(byCursor.length).toBeLessThanOrEqual(order.length);
            cursor = next.pagination.nextCursor;
          }
          expect(byCursor, `${sort} by cursor, limit ${limit}`).toEqual(order);
        }
      }
      expect((await list('limit=100')).slugs).toEqual([...expected['-createdAt']!, ...builtIns]);
      // A cursor is bound to its sort: a custom object's and a built-in's, against another sort or the default.
      const byName = await list('sort=name&limit=1');
      const builtInCursor = (await list('sort=name&limit=6')).pagination.nextCursor as string;
      for (const [cursor, sort] of [[byName.pagination.nextCursor, '-name'], [byName.pagination.nextCursor, undefined], [builtInCursor, 'createdAt']] as const) {
        const res = await as('GET', `/objects?after=${encodeURIComponent(cursor)}${sort ? `&sort=${sort}` : ''}`);
        expect(expectError(res, 400, 'VALIDATION_FAILED').map((e) => e.field)).toEqual(['after']);
      }
      for (const sort of ['slug', 'dueDate', 'Name']) {
        expect(expectError(await as('GET', `/objects?sort=${sort}`), 400, 'VALIDATION_FAILED').map((e) => e.field)).toEqual(['sort']);
      }
    } finally {
      await timed.close();
    }
  });

  it('gets one object; 404 for an unknown slug or another organization\'s', async () => {
    const got = await call(t.app, 'GET', '/objects/projects', { auth: a.auth });
    expect(got.status).toBe(200);
    expect(got.body.data.object.slug).toBe('projects');
    expectError(await call(t.app, 'GET', '/objects/projects', { auth: b.auth }), 404, 'NOT_FOUND');
    expectError(await call(t.app, 'GET', '/objects/nope', { auth: a.auth }), 404, 'NOT_FOUND');
  });

  it('needs records:read or objects:admin to read, objects:admin to write', async () => {
    const reader = await addKey(t.ctx, a.orgId, ['records:read']);
    const admin = await addKey(t.ctx, a.orgId, ['objects:admin']);
    const other = await addKey(t.ctx, a.orgId, ['leads:read', 'records:write']);
    for (const key of [reader, admin]) {
      expect((await call(t.app, 'GET', '/objects', { auth: key.auth })).status).toBe(200);
      expect((await call(t.app, 'GET', '/objects/projects', { auth: key.auth })).status).toBe(200);
    }
    expectError(await call(t.app, 'GET', '/objects', { auth: other.auth }), 403, 'INSUFFICIENT_SCOPE');
    expectError(await call(t.app, 'GET', '/objects/projects', { auth: other.auth }), 403, 'INSUFFICIENT_SCOPE');
    const denied = expectError(await call(t.app, 'POST', '/objects', { auth: reader.auth, body: { slug: slug(), name: 'X' } }), 403, 'INSUFFICIENT_SCOPE');
    expect(denied).toEqual([]);
    expectError(await call(t.app, 'PATCH', '/objects/projects', { auth: reader.auth, body: { name: 'X' } }), 403, 'INSUFFICIENT_SCOPE');
    expect((await call(t.app, 'POST', '/objects', { auth: admin.auth, body: { slug: slug(), name: 'X' } })).status).toBe(201);
    expectError(await call(t.app, 'GET', '/objects', {}), 401, 'UNAUTHORIZED');
  });
});

describe('PATCH /objects/{slug}', () => {
  const patch = (s: string, body: unknown, who: Seeded = a) => call(t.app, 'PATCH', `/objects/${s}`, { auth: who.auth, body });
  const addRecord = (s: string, body: unknown) => call(t.app, 'POST', `/objects/${s}/records`, { auth: a.auth, body });

  async function withData() {
    const s = slug('evolve');
    await createObject(a, {
      slug: s,
      name: 'Evolve',
      fields: [
        { key: 'title', label: 'Title', type: 'text' },
        { key: 'spare', label: 'Spare', type: 'text' },
        { key: 'tier', label: 'Tier', type: 'select', options: ['gold', 'silver', 'bronze'] },
        { key: 'due_on', label: 'Due', type: 'date', role: 'due' },
      ],
      stages: [{ key: 'open', label: 'Open' }, { key: 'closed', label: 'Closed' }, { key: 'unused', label: 'Unused' }],
    });
    expect((await addRecord(s, { title: 'Has data', tier: 'gold', due_on: '2030-01-01' })).status).toBe(201);
    return s;
  }

  it('renames, relabels, adds fields, options and stages', async () => {
    const s = await withData();
    const res = await patch(s, {
      name: 'Evolved',
      fields: [
        { key: 'title', label: 'Headline', type: 'text' },
        { key: 'spare', label: 'Spare', type: 'text' },
        { key: 'tier', label: 'Tier', type: 'select', options: ['gold', 'silver', 'bronze', 'platinum'] },
        { key: 'due_on', label: 'Due', type: 'date', role: 'due' },
        { key: 'score', label: 'Score', type: 'number' },
      ],
      stages: [{ key: 'open', label: 'Open' }, { key: 'closed', label: 'Closed' }, { key: 'unused', label: 'Unused' }, { key: 'archived', label: 'Archived' }],
    });
    expect(res.status).toBe(200);
    const object = res.body.data.object;
    expect(object.name).toBe('Evolved');
    expect(object.fields.map((f: { key: string }) => f.key)).toEqual(['title', 'spare', 'tier', 'due_on', 'score']);
    expect(object.fields[0].label).toBe('Headline');
    expect(object.fields[2].options).toContain('platinum');
    expect(object.stages.map((x: { key: string }) => x.key)).toEqual(['open', 'closed', 'unused', 'archived']);
    expect(object.updatedAt >= object.createdAt).toBe(true);
    const record = await addRecord(s, { title: 'New', score: 3, tier: 'platinum' });
    expect(record.body.data.record).toMatchObject({ score: 3, tier: 'platinum', spare: null });
  });

  it('removes unused fields, options and stages', async () => {
    const s = await withData();
    const res = await patch(s, {
      fields: [
        { key: 'title', label: 'Title', type: 'text' },
        { key: 'tier', label: 'Tier', type: 'select', options: ['gold'] },
        { key: 'due_on', label: 'Due', type: 'date', role: 'due' },
      ],
      stages: [{ key: 'open', label: 'Open' }, { key: 'closed', label: 'Closed' }],
    });
    expect(res.status).toBe(200);
    expect(res.body.data.object.fields.map((f: { key: string }) => f.key)).toEqual(['title', 'tier', 'due_on']);
    expect(res.body.data.object.stages).toHaveLength(2);
  });

  it('refuses to remove or retype a field with data, drop a used option or stage, change a used role, or require a field some records lack', async () => {
    const s = await withData();
    const res = await patch(s, {
      fields: [
        { key: 'title', label: 'Title', type: 'number' },
        { key: 'spare', label: 'Spare', type: 'text', required: true },
        { key: 'tier', label: 'Tier', type: 'select', options: ['silver'] },
        { key: 'due_on', label: 'Due', type: 'date' },
      ],
      stages: [{ key: 'closed', label: 'Closed' }],
    });
    const errors = expectError(res, 400, 'VALIDATION_FAILED');
    expect(errors.map((e) => [e.field, e.code])).toEqual(expect.arrayContaining([
      ['fields.0.type', 'in_use'],
      ['fields.1.required', 'in_use'],
      ['fields.2.options', 'in_use'],
      ['fields.3.role', 'in_use'],
      ['stages', 'in_use'],
    ]));
    expect(errors.find((e) => e.field === 'fields.0.type')!.message).toContain('"title"');
    expect(errors.find((e) => e.field === 'fields.2.options')!.message).toContain('"gold"');
    expect(errors.find((e) => e.field === 'stages')!.message).toContain('"open"');
    const removal = expectError(await patch(s, { fields: [{ key: 'spare', label: 'Spare', type: 'text' }] }), 400, 'VALIDATION_FAILED');
    expect(removal.map((e) => e.message).join(' ')).toMatch(/"title".*removed/);
    const unchanged = await call(t.app, 'GET', `/objects/${s}`, { auth: a.auth });
    expect(unchanged.body.data.object.fields).toHaveLength(4);
  });

  it('retypes a field without data and refuses a new required field while records exist', async () => {
    const s = await withData();
    const retyped = await patch(s, {
      fields: [
        { key: 'title', label: 'Title', type: 'text' },
        { key: 'spare', label: 'Spare', type: 'number' },
        { key: 'tier', label: 'Tier', type: 'select', options: ['gold', 'silver', 'bronze'] },
        { key: 'due_on', label: 'Due', type: 'date', role: 'due' },
      ],
    });
    expect(retyped.status).toBe(200);
    expect(retyped.body.data.object.fields[1].type).toBe('number');
    const required = await patch(s, { fields: [...retyped.body.data.object.fields, { key: 'owner', label: 'Owner', type: 'text', required: true }] });
    expect(expectError(required, 400, 'VALIDATION_FAILED')[0]).toMatchObject({ field: 'fields.4.required', code: 'in_use' });
  });

  it('applies the definition rules to the new lists', async () => {
    const s = await withData();
    const errors = expectError(await patch(s, { fields: [{ key: 'id', label: 'Id', type: 'text' }], stages: [{ key: 'a', label: 'A' }, { key: 'a', label: 'B' }] }), 400, 'VALIDATION_FAILED');
    expect(errors.map((e) => e.field).sort()).toEqual(['fields.0.key', 'stages.1.key']);
  });

  it('refuses an empty body, unknown keys, and another organization\'s object', async () => {
    expectError(await patch('projects', {}), 400, 'VALIDATION_FAILED');
    expect(expectError(await patch('projects', { slug: 'renamed' }), 400, 'VALIDATION_FAILED')[0]).toMatchObject({ field: 'slug', code: 'unknown_field' });
    expectError(await patch('projects', { name: 'Stolen' }, b), 404, 'NOT_FOUND');
    expectError(await patch('missing', { name: 'X' }), 404, 'NOT_FOUND');
    const readOnly = expectError(await patch('projects', { fields: [{ key: 'title', label: 'Title', type: 'text', required: true, readOnly: true }] }), 400, 'VALIDATION_FAILED');
    expect(readOnly).toEqual([expect.objectContaining({ field: 'fields.0.readOnly', code: 'unknown_field' })]);
    expect((await call(t.app, 'GET', '/objects/projects', { auth: a.auth })).body.data.object.name).toBe('Projects');
  });
});
