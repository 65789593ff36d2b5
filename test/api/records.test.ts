import { existsSync, readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, dialect, type TestApp } from '../helpers/test-app.js';
import { addKey, seedOrg, type Seeded } from '../helpers/seed.js';
import { call, expectError } from '../helpers/http.js';
import { listEvents } from '../../src/modules/events/outbox.store.js';

let t: TestApp;
let a: Seeded;
let b: Seeded;

const FIELDS = [
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

beforeAll(async () => {
  t = await buildTestApp();
  a = await seedOrg(t.ctx);
  b = await seedOrg(t.ctx);
  for (const who of [a, b]) {
    const res = await call(t.app, 'POST', '/objects', { auth: who.auth, body: { slug: 'projects', name: 'Projects', fields: FIELDS, stages: [{ key: 'planned', label: 'Planned' }, { key: 'active', label: 'Active' }, { key: 'done', label: 'Done' }] } });
    expect(res.status).toBe(201);
  }
  await call(t.app, 'POST', '/objects', { auth: a.auth, body: { slug: 'notes', name: 'Notes', fields: [{ key: 'body', label: 'Body', type: 'long_text' }] } });
});
afterAll(() => t.close());

const create = (body: unknown, who: Seeded = a, slug = 'projects', headers?: Record<string, string>) => call(t.app, 'POST', `/objects/${slug}/records`, { auth: who.auth, body, headers });
const patch = (id: string, body: unknown, who: Seeded = a, slug = 'projects') => call(t.app, 'PATCH', `/objects/${slug}/records/${id}`, { auth: who.auth, body });

describe('POST /objects/{object}/records', () => {
  it('creates a flat record with every field type normalized, the first stage, and null for unset fields', async () => {
    const res = await create({
      title: 'Relaunch',
      notes: 'Line one\nline two',
      budget: 1250.5,
      active: true,
      due_on: '2030-05-17',
      kickoff_at: '2030-05-01T09:30:00+02:00',
      priority: 'high',
      contact_email: '  Ada@Example.COM ',
      contact_phone: '+44 20 7946 0958',
      site: 'https://example.com/a?b=c',
    });
    expect(res.status).toBe(201);
    const record = res.body.data.record;
    expect(record).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{24}$/),
      objectSlug: 'projects',
      stage: 'planned',
      title: 'Relaunch',
      notes: 'Line one\nline two',
      budget: 1250.5,
      active: true,
      due_on: '2030-05-17T00:00:00.000Z',
      kickoff_at: '2030-05-01T07:30:00.000Z',
      priority: 'high',
      contact_email: 'ada@example.com',
      contact_phone: '+442079460958',
      site: 'https://example.com/a?b=c',
      createdAt: expect.stringMatching(/Z$/),
      updatedAt: record.createdAt,
      deletedAt: null,
      externalId: null,
    });
    const minimal = await create({ title: 'Only a title', stage: 'done' });
    expect(minimal.body.data.record).toMatchObject({ stage: 'done', notes: null, budget: null, active: null, due_on: null, contact_email: null });
  });

  it('lists every bad value in one 400: unknown and read-only keys, types, formats, options, impossible dates, missing required', async () => {
    const res = await create({
      notes: 42,
      budget: '12',
      active: 'yes',
      due_on: '2026-02-30',
      kickoff_at: '2026-03-01T10:00:00',
      priority: 'urgent',
      contact_email: 'not-an-email',
      contact_phone: '0207946 0958',
      site: 'ftp://example.com',
      colour: 'red',
      id: '0123456789abcdef01234567',
      stage: 'archived',
    });
    const errors = expectError(res, 400, 'VALIDATION_FAILED');
    expect(Object.fromEntries(errors.map((e) => [e.field, e.code]))).toEqual({
      title: 'required',
      notes: 'invalid_type',
      budget: 'invalid_type',
      active: 'invalid_type',
      due_on: 'invalid_date',
      kickoff_at: 'invalid_format',
      priority: 'invalid_value',
      contact_email: 'invalid_format',
      contact_phone: 'invalid_format',
      site: 'invalid_format',
      colour: 'unknown_field',
      id: 'read_only',
      stage: 'invalid_value',
    });
    const byField = Object.fromEntries(errors.map((e) => [e.field, e.message]));
    expect(byField.stage).toBe('must be one of: planned, active, done');
    expect(byField.priority).toBe('must be one of: low, high');
    expect(byField.contact_phone).toMatch(/country code/);
    expect(JSON.stringify(res.body)).not.toContain('not-an-email');
  });

  it('refuses a blank required text, a null required field, overlong text, and a non-object body', async () => {
    const errors = expectError(await create({ title: '   ', budget: null, notes: 'x'.repeat(65_536) }), 400, 'VALIDATION_FAILED');
    expect(Object.fromEntries(errors.map((e) => [e.field, e.code]))).toEqual({ title: 'required', notes: 'too_long' });
    expect(expectError(await create({ title: null }), 400, 'VALIDATION_FAILED')[0]).toMatchObject({ field: 'title', code: 'required' });
    expectError(await create([1, 2]), 400, 'VALIDATION_FAILED');
  });

  it('has no stage (null) on an object without stages and refuses one', async () => {
    const res = await create({ body: 'Free text' }, a, 'notes');
    expect(res.status).toBe(201);
    expect(res.body.data.record).toMatchObject({ objectSlug: 'notes', stage: null, body: 'Free text' });
    const errors = expectError(await create({ body: 'x', stage: 'open' }, a, 'notes'), 400, 'VALIDATION_FAILED');
    expect(errors[0]).toMatchObject({ field: 'stage', code: 'not_allowed' });
    expect((await create({ body: 'x', stage: null }, a, 'notes')).status).toBe(201);
  });

  it('records record.created with data.object "record", the object slug, and contact fields masked', async () => {
    const record = (await create({ title: 'Evented', contact_email: 'evented@example.com', contact_phone: '+14155550123' })).body.data.record;
    const [event, ...rest] = await listEvents(t.ctx.database.db, a.orgId, { objectId: record.id });
    expect(rest).toEqual([]);
    expect(event).toMatchObject({
      type: 'record.created',
      organization: a.orgId,
      data: {
        object: 'record',
        id: record.id,
        objectSlug: 'projects',
        actor: { type: 'API_KEY', id: a.keyId, channel: 'API' },
        changes: { before: {}, after: { stage: 'planned', title: 'Evented', contact_email: '[encrypted]', contact_phone: '[encrypted]' } },
      },
    });
    expect(JSON.stringify(event)).not.toContain('evented@example.com');
    expect(JSON.stringify(event)).not.toContain('4155550123');
  });

  it('replays an idempotent create: one record, one event', async () => {
    const headers = { 'idempotency-key': 'record-once' };
    const first = await create({ title: 'Once', contact_email: 'once@example.com' }, a, 'projects', headers);
    const again = await create({ title: 'Once', contact_email: 'once@example.com' }, a, 'projects', headers);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(await listEvents(t.ctx.database.db, a.orgId, { objectId: first.body.data.record.id })).toHaveLength(1);
    expectError(await create({ title: 'Different' }, a, 'projects', headers), 422, 'IDEMPOTENCY_KEY_REUSED');
  });

  it('answers 404 for an unknown object or another organization\'s object', async () => {
    expectError(await create({ title: 'X' }, a, 'unknown'), 404, 'NOT_FOUND');
    expectError(await create({ body: 'X' }, b, 'notes'), 404, 'NOT_FOUND');
  });
});

describe('GET and PATCH /objects/{object}/records/{id}', () => {
  it('gets a record; 404 for another organization, another object, or an unknown id', async () => {
    const record = (await create({ title: 'Readable' })).body.data.record;
    const got = await call(t.app, 'GET', `/objects/projects/records/${record.id}`, { auth: a.auth });
    expect(got.status).toBe(200);
    expect(got.body.data.record).toEqual(record);
    expectError(await call(t.app, 'GET', `/objects/projects/records/${record.id}`, { auth: b.auth }), 404, 'NOT_FOUND');
    expectError(await call(t.app, 'GET', `/objects/notes/records/${record.id}`, { auth: a.auth }), 404, 'NOT_FOUND');
    expectError(await call(t.app, 'GET', '/objects/projects/records/0000000000000000deadbeef', { auth: a.auth }), 404, 'NOT_FOUND');
    expectError(await call(t.app, 'GET', `/objects/nope/records/${record.id}`, { auth: a.auth }), 404, 'NOT_FOUND');
  });

  it('changes only the sent keys, clears with null, and records record.updated with before/after', async () => {
    const record = (await create({ title: 'Patchy', budget: 10, contact_email: 'old@example.com', priority: 'low' })).body.data.record;
    const res = await patch(record.id, { budget: null, contact_email: 'New@Example.com', notes: 'added' });
    expect(res.status).toBe(200);
    expect(res.body.data.record).toMatchObject({ title: 'Patchy', budget: null, contact_email: 'new@example.com', notes: 'added', priority: 'low', stage: 'planned' });
    expect(res.body.data.record.updatedAt >= record.updatedAt).toBe(true);
    const events = await listEvents(t.ctx.database.db, a.orgId, { objectId: record.id });
    expect(events.map((e) => e.type)).toEqual(['record.created', 'record.updated']);
    expect(events[1]!.data).toMatchObject({
      object: 'record',
      objectSlug: 'projects',
      changes: { before: { budget: 10, contact_email: '[encrypted]', notes: null }, after: { budget: null, contact_email: '[encrypted]', notes: 'added' } },
    });
  });

  it('records a stage change as record.stage_changed (stage only) and other changes as a separate record.updated', async () => {
    const record = (await create({ title: 'Mover' })).body.data.record;
    const res = await patch(record.id, { stage: 'active', title: 'Moved' });
    expect(res.body.data.record).toMatchObject({ stage: 'active', title: 'Moved' });
    const events = (await listEvents(t.ctx.database.db, a.orgId, { objectId: record.id })).slice(1);
    expect(events.map((e) => [e.type, e.data.changes])).toEqual([
      ['record.stage_changed', { before: { stage: 'planned' }, after: { stage: 'active' } }],
      ['record.updated', { before: { title: 'Mover' }, after: { title: 'Moved' } }],
    ]);
    expect(events.every((e) => e.data.objectSlug === 'projects' && e.data.object === 'record')).toBe(true);
    expect(events[0]!.data.description).toBe('Projects record moved from Planned to Active');
    await patch(record.id, { stage: 'done' });
    const last = (await listEvents(t.ctx.database.db, a.orgId, { objectId: record.id })).at(-1)!;
    expect(last.type).toBe('record.stage_changed');
  });

  it('records nothing and keeps updatedAt when nothing changes', async () => {
    const record = (await create({ title: 'Same', contact_phone: '+14155550100' })).body.data.record;
    const res = await patch(record.id, { title: 'Same', contact_phone: '+1 415 555 0100', stage: 'planned' });
    expect(res.status).toBe(200);
    expect(res.body.data.record.updatedAt).toBe(record.updatedAt);
    expect(await listEvents(t.ctx.database.db, a.orgId, { objectId: record.id })).toHaveLength(1);
  });

  it('validates a patch like a create, all bad keys at once, and refuses clearing required fields or the stage', async () => {
    const record = (await create({ title: 'Strict' })).body.data.record;
    const errors = expectError(await patch(record.id, { title: null, stage: null, budget: 'ten', createdAt: '2020-01-01T00:00:00.000Z', nope: 1 }), 400, 'VALIDATION_FAILED');
    expect(Object.fromEntries(errors.map((e) => [e.field, e.code]))).toEqual({ title: 'required', stage: 'invalid_value', budget: 'invalid_type', createdAt: 'read_only', nope: 'unknown_field' });
    expectError(await patch(record.id, {}), 400, 'VALIDATION_FAILED');
    expect((await call(t.app, 'GET', `/objects/projects/records/${record.id}`, { auth: a.auth })).body.data.record.title).toBe('Strict');
  });

  it('answers 404 when patching another organization\'s record or through another object', async () => {
    const record = (await create({ title: 'Mine' })).body.data.record;
    expectError(await patch(record.id, { title: 'Stolen' }, b), 404, 'NOT_FOUND');
    expectError(await patch(record.id, { body: 'x' }, a, 'notes'), 404, 'NOT_FOUND');
    expectError(await patch(record.id, { title: 'x' }, a, 'missing'), 404, 'NOT_FOUND');
    expect((await call(t.app, 'GET', `/objects/projects/records/${record.id}`, { auth: a.auth })).body.data.record.title).toBe('Mine');
  });
});

describe('scopes', () => {
  it('needs records:read to read and records:write to write (write does not imply read)', async () => {
    const record = (await create({ title: 'Scoped' })).body.data.record;
    const reader = await addKey(t.ctx, a.orgId, ['records:read']);
    const writer = await addKey(t.ctx, a.orgId, ['records:write']);
    const admin = await addKey(t.ctx, a.orgId, ['objects:admin']);
    expect((await call(t.app, 'GET', '/objects/projects/records', { auth: reader.auth })).status).toBe(200);
    expect((await call(t.app, 'GET', `/objects/projects/records/${record.id}`, { auth: reader.auth })).status).toBe(200);
    for (const key of [writer, admin]) {
      expectError(await call(t.app, 'GET', '/objects/projects/records', { auth: key.auth }), 403, 'INSUFFICIENT_SCOPE');
      expectError(await call(t.app, 'GET', `/objects/projects/records/${record.id}`, { auth: key.auth }), 403, 'INSUFFICIENT_SCOPE');
    }
    for (const key of [reader, admin]) {
      expectError(await call(t.app, 'POST', '/objects/projects/records', { auth: key.auth, body: { title: 'x' } }), 403, 'INSUFFICIENT_SCOPE');
      expectError(await call(t.app, 'PATCH', `/objects/projects/records/${record.id}`, { auth: key.auth, body: { title: 'x' } }), 403, 'INSUFFICIENT_SCOPE');
    }
    expect((await call(t.app, 'POST', '/objects/projects/records', { auth: writer.auth, body: { title: 'w' } })).status).toBe(201);
    expect((await call(t.app, 'PATCH', `/objects/projects/records/${record.id}`, { auth: writer.auth, body: { title: 'w' } })).status).toBe(200);
  });
});

describe('encryption at rest', () => {
  it('never stores an e-mail or phone of a record in clear', async () => {
    const email = 'secret.person@hidden-domain.example';
    const phone = '+14155550177';
    const record = (await create({ title: 'Private', contact_email: email, contact_phone: phone }, a, 'projects', { 'idempotency-key': 'private-record' })).body.data.record;
    expect(record.contact_email).toBe(email);
    let dump: string;
    if (dialect === 'sqlite') {
      // The database file and its write-ahead log: wherever the rows are, they are in these bytes.
      dump = ['', '-wal'].map((suffix) => (existsSync(t.location + suffix) ? readFileSync(t.location + suffix).toString('latin1') : '')).join('');
    } else {
      const client = new pg.Client({ connectionString: t.config.database.url });
      await client.connect();
      const tables = ['records', 'events', 'idempotency_keys', 'record_reminders'];
      const rows = await Promise.all(tables.map((table) => client.query(`select * from ${t.location}.${table}`)));
      await client.end();
      dump = JSON.stringify(rows.map((r) => r.rows));
    }
    expect(dump).toContain('Private');
    expect(dump).not.toContain('secret.person');
    expect(dump).not.toContain('hidden-domain');
    expect(dump).not.toContain('4155550177');
    const got = await call(t.app, 'GET', `/objects/projects/records/${record.id}`, { auth: a.auth });
    expect(got.body.data.record).toMatchObject({ contact_email: email, contact_phone: phone });
  });
});
