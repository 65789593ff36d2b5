import { eventually } from '../helpers/receiver.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { addKey, seedOrg, type Seeded } from '../helpers/seed.js';
import { call, expectError } from '../helpers/http.js';
import { databaseText } from '../helpers/database-text.js';

let t: TestApp;
let a: Seeded;
let b: Seeded;
let leadId: string;
let recordId: string;

beforeAll(async () => {
  t = await buildTestApp();
  a = await seedOrg(t.ctx);
  b = await seedOrg(t.ctx);
  leadId = (await call(t.app, 'POST', '/leads', { auth: a.auth, body: { name: 'Ada' } })).body.data.lead.id;
  await call(t.app, 'POST', '/objects', { auth: a.auth, body: { slug: 'visits', name: 'Visits', fields: [{ key: 'title', label: 'Title', type: 'text' }] } });
  recordId = (await call(t.app, 'POST', '/objects/visits/records', { auth: a.auth, body: { title: 'Flat' } })).body.data.record.id;
});
afterAll(() => t.close());

const addNote = (who: Seeded | { auth: Record<string, string> }, body: unknown) => call(t.app, 'POST', '/notes', { auth: who.auth, body });

describe('POST /notes', () => {
  it('adds a markdown note to a lead and to a record, answered 201 with its target', async () => {
    const res = await addNote(a, { target: { object: 'lead', id: leadId }, body: 'Called: wants a **demo**.' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data.note).toEqual({ id: expect.stringMatching(/^[0-9a-f]{24}$/), target: { object: 'lead', id: leadId }, body: 'Called: wants a **demo**.', createdAt: expect.any(String), updatedAt: expect.any(String), deletedAt: null });
    const onRecord = await addNote(a, { target: { object: 'record', id: recordId, objectSlug: 'visits' }, body: 'Keys at the desk' });
    expect(onRecord.status).toBe(201);
    expect(onRecord.body.data.note.target).toEqual({ object: 'record', id: recordId, objectSlug: 'visits' });
  });

  it('refuses a target that is unknown, of another organization, trashed, or a record without its slug', async () => {
    const otherLead = (await call(t.app, 'POST', '/leads', { auth: b.auth, body: { name: 'Other' } })).body.data.lead.id;
    for (const target of [{ object: 'lead', id: otherLead }, { object: 'account', id: leadId }, { object: 'record', id: recordId, objectSlug: 'nope' }]) {
      const errors = expectError(await addNote(a, { target, body: 'x' }), 400, 'VALIDATION_FAILED');
      expect(errors).toEqual([{ field: 'target.id', code: 'not_found', message: expect.stringMatching(/is not a live/) }]);
    }
    expect(expectError(await addNote(a, { target: { object: 'record', id: recordId }, body: 'x' }), 400, 'VALIDATION_FAILED')).toEqual([{ field: 'target.objectSlug', code: 'required', message: 'is required for a record' }]);
    expect(expectError(await addNote(a, { target: { object: 'lead', id: leadId, objectSlug: 'visits' }, body: 'x' }), 400, 'VALIDATION_FAILED')[0]!.code).toBe('not_allowed');
    const trashed = (await call(t.app, 'POST', '/leads', { auth: a.auth, body: { name: 'Gone' } })).body.data.lead.id;
    await call(t.app, 'DELETE', `/leads/${trashed}`, { auth: a.auth });
    expectError(await addNote(a, { target: { object: 'lead', id: trashed }, body: 'x' }), 400, 'VALIDATION_FAILED');
  });

  it('refuses unknown fields, a blank body and one over 100 kB of UTF-8', async () => {
    const errors = expectError(await addNote(a, { target: { object: 'lead', id: leadId, extra: 1 }, body: ' ', color: 'red' }), 400, 'VALIDATION_FAILED');
    expect(errors.map((e) => e.field).sort()).toEqual(['body', 'color', 'target.extra']);
    // 40,000 characters but 120,000 bytes: within maxLength, over the byte limit.
    const big = expectError(await addNote(a, { target: { object: 'lead', id: leadId }, body: '€'.repeat(40_000) }), 400, 'VALIDATION_FAILED');
    expect(big).toEqual([{ field: 'body', code: 'too_long', message: expect.stringMatching(/102400 bytes/) }]);
    expect((await addNote(a, { target: { object: 'lead', id: leadId }, body: 'a'.repeat(102_400) })).status).toBe(201);
  });

  it('keeps the body encrypted at rest and out of events', async () => {
    const secret = 'the-door-code-is-4711';
    const note = (await addNote(a, { target: { object: 'lead', id: leadId }, body: secret })).body.data.note;
    expect(await databaseText(t)).not.toContain(secret);
    await eventually(async () => {
      const events = (await call(t.app, 'GET', '/events?types=note.created', { auth: a.auth })).body.data.events;
      const created = events.find((e: { data: { id: string } }) => e.data.id === note.id);
      expect(created.data).toMatchObject({ object: 'note', id: note.id, changes: { before: {}, after: { target: { object: 'lead', id: leadId }, body: '[encrypted]' } } });
    }, 20_000, 50);
  });
});

describe('GET, PATCH, DELETE /notes', () => {
  it('lists by target newest first, reads, edits (note.updated) and trashes and restores a note', async () => {
    const lead = (await call(t.app, 'POST', '/leads', { auth: a.auth, body: { name: 'Bob' } })).body.data.lead.id;
    const first = (await addNote(a, { target: { object: 'lead', id: lead }, body: 'one' })).body.data.note;
    const second = (await addNote(a, { target: { object: 'lead', id: lead }, body: 'two' })).body.data.note;
    const listed = await call(t.app, 'GET', `/notes?targetId=${lead}`, { auth: a.auth });
    expect(listed.body.data.notes.map((n: { body: string }) => n.body)).toEqual(['two', 'one']);
    expect(listed.body.data.pagination).toMatchObject({ total: 2, page: 1 });
    expect((await call(t.app, 'GET', `/notes/${first.id}`, { auth: a.auth })).body.data.note.body).toBe('one');
    const edited = await call(t.app, 'PATCH', `/notes/${first.id}`, { auth: a.auth, body: { body: 'one, edited' } });
    expect(edited.body.data.note.body).toBe('one, edited');
    expectError(await call(t.app, 'PATCH', `/notes/${first.id}`, { auth: a.auth, body: { target: { object: 'lead', id: lead } } }), 400, 'VALIDATION_FAILED');
    const deleted = await call(t.app, 'DELETE', `/notes/${second.id}`, { auth: a.auth });
    expect(deleted.body.data.note.deletedAt).toEqual(expect.any(String));
    expectError(await call(t.app, 'GET', `/notes/${second.id}`, { auth: a.auth }), 404, 'NOT_FOUND');
    expect((await call(t.app, 'GET', `/notes?targetId=${lead}&deleted=true`, { auth: a.auth })).body.data.notes.map((n: { id: string }) => n.id)).toEqual([second.id]);
    expect((await call(t.app, 'POST', `/notes/${second.id}/restore`, { auth: a.auth })).body.data.note.deletedAt).toBeNull();
    expect((await call(t.app, 'DELETE', `/notes/${second.id}?permanent=true`, { auth: a.auth })).status).toBe(200);
    expectError(await call(t.app, 'POST', `/notes/${second.id}/restore`, { auth: a.auth }), 404, 'NOT_FOUND');
    await eventually(async () => {
      const types = (await call(t.app, 'GET', '/events?types=note.created,note.updated,note.deleted,note.restored,note.purged', { auth: a.auth })).body.data.events
        .filter((e: { data: { id: string } }) => e.data.id === first.id || e.data.id === second.id)
        .map((e: { type: string }) => e.type);
      // The purged note's earlier events went with it.
      expect(types).toEqual(['note.created', 'note.updated', 'note.purged']);
    }, 20_000, 50);
  });

  it('the change feed shows note.* to notes:read and task.* to tasks:read, each without the other resources', async () => {
    const lead = (await call(t.app, 'POST', '/leads', { auth: a.auth, body: { name: 'Fed' } })).body.data.lead.id;
    await addNote(a, { target: { object: 'lead', id: lead }, body: 'fed' });
    await call(t.app, 'POST', '/tasks', { auth: a.auth, body: { title: 'fed' } });
    const typesFor = async (scopes: Parameters<typeof addKey>[2]) => {
      const key = await addKey(t.ctx, a.orgId, scopes);
      return new Set((await call(t.app, 'GET', '/events?limit=1000', { auth: key.auth })).body.data.events.map((e: { type: string }) => e.type.split('.')[0]));
    };
    await eventually(async () => {
      expect(await typesFor(['notes:read'])).toEqual(new Set(['note']));
      expect(await typesFor(['tasks:read'])).toEqual(new Set(['task']));
    }, 20_000, 50);
    const leadsOnly = await addKey(t.ctx, a.orgId, ['leads:read']);
    expectError(await call(t.app, 'GET', '/events?types=note.created', { auth: leadsOnly.auth }), 403, 'INSUFFICIENT_SCOPE');
  });

  it('is confined to the organization and to the notes scopes', async () => {
    const note = (await addNote(a, { target: { object: 'lead', id: leadId }, body: 'mine' })).body.data.note;
    expectError(await call(t.app, 'GET', `/notes/${note.id}`, { auth: b.auth }), 404, 'NOT_FOUND');
    expectError(await call(t.app, 'PATCH', `/notes/${note.id}`, { auth: b.auth, body: { body: 'x' } }), 404, 'NOT_FOUND');
    expectError(await call(t.app, 'DELETE', `/notes/${note.id}`, { auth: b.auth }), 404, 'NOT_FOUND');
    expect((await call(t.app, 'GET', '/notes', { auth: b.auth })).body.data.notes.map((n: { id: string }) => n.id)).not.toContain(note.id);
    const reader = await addKey(t.ctx, a.orgId, ['notes:read']);
    expect((await call(t.app, 'GET', `/notes/${note.id}`, { auth: reader.auth })).status).toBe(200);
    expect(expectError(await addNote(reader, { target: { object: 'lead', id: leadId }, body: 'x' }), 403, 'INSUFFICIENT_SCOPE').length).toBe(0);
    const leadsOnly = await addKey(t.ctx, a.orgId, ['leads:read', 'leads:write']);
    expectError(await call(t.app, 'GET', '/notes', { auth: leadsOnly.auth }), 403, 'INSUFFICIENT_SCOPE');
  });
});
