import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../../src/modules/events/outbox.store.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';
import { addConsoleUser, fieldError, get, post, signIn, submit, type ConsoleSession } from '../helpers/admin.js';

let t: TestApp;
let a: Seeded;
let s: ConsoleSession;

beforeAll(async () => {
  t = await buildTestApp();
  a = await seedOrg(t.ctx, { timezone: 'Europe/Paris' });
  s = await signIn(t.app, await addConsoleUser(t.ctx, a.orgId, { name: 'Nora Notes' }));
});
afterAll(() => t?.close());

const UI = (userId: string) => ({ type: 'USER', id: userId, channel: 'UI' });

describe('console: adding notes on a timeline', () => {
  it('every item page has an "Add note" form that creates the note like POST /notes (note.created, channel UI)', async () => {
    const lead = (await call(t.app, 'POST', '/leads', { auth: a.auth, body: { name: 'Ada' } })).body.data.lead.id;
    const account = (await call(t.app, 'POST', '/accounts', { auth: a.auth, body: { name: 'Acme' } })).body.data.account.id;
    const deal = (await call(t.app, 'POST', '/deals', { auth: a.auth, body: { name: 'Deal' } })).body.data.deal.id;
    await call(t.app, 'POST', '/objects', { auth: a.auth, body: { slug: 'visits', name: 'Visits', fields: [{ key: 'title', label: 'Title', type: 'text' }] } });
    const record = (await call(t.app, 'POST', '/objects/visits/records', { auth: a.auth, body: { title: 'Flat' } })).body.data.record.id;
    const items: { fields: Record<string, string>; page: string }[] = [
      { fields: { object: 'lead', id: lead }, page: `/admin/data/leads/${lead}` },
      { fields: { object: 'account', id: account }, page: `/admin/data/accounts/${account}` },
      { fields: { object: 'deal', id: deal }, page: `/admin/data/deals/${deal}` },
      { fields: { object: 'record', id: record, objectSlug: 'visits' }, page: `/admin/data/objects/visits/${record}` },
    ];
    for (const { fields, page } of items) {
      expect((await get(t.app, page, s.cookie)).body).toContain('action="/admin/data/notes"');
      const res = await submit(t.app, s, '/admin/data/notes', { ...fields, body: `Called **${fields.object}** <b>` });
      expect(res.status, res.body).toBe(303);
      expect(res.location).toBe(`${page}#history`);
      expect((await get(t.app, page, s.cookie)).body).toContain(`Called **${fields.object}** &lt;b&gt;`);
      const notes = (await call(t.app, 'GET', `/notes?targetId=${fields.id}`, { auth: a.auth })).body.data.notes;
      expect(notes).toEqual([expect.objectContaining({ body: `Called **${fields.object}** <b>` })]);
      const [event] = await listEvents(t.ctx.database.db, a.orgId, { objectId: notes[0].id });
      expect(event).toMatchObject({ type: 'note.created', data: { actor: UI(s.userId) } });
    }
  });

  it('refuses an empty note with the field named, keeps a foreign CSRF out, and 404s an unknown item', async () => {
    const lead = (await call(t.app, 'POST', '/leads', { auth: a.auth, body: { name: 'Empty' } })).body.data.lead.id;
    const empty = await submit(t.app, s, '/admin/data/notes', { object: 'lead', id: lead, body: '   ' });
    expect(empty.status).toBe(400);
    expect(fieldError(empty.body, 'body')).toContain('Add note');
    expect((await post(t.app, '/admin/data/notes', { object: 'lead', id: lead, body: 'x' }, { cookie: s.cookie, csrf: 'forged' })).status).toBe(403);
    const gone = await submit(t.app, s, '/admin/data/notes', { object: 'lead', id: '0123456789abcdef01234567', body: 'Lost' });
    expect(gone.status).toBe(400);
    expect(gone.body).toContain('Lost');
    expect((await call(t.app, 'GET', `/notes?targetId=${lead}`, { auth: a.auth })).body.data.notes).toEqual([]);
  });
});

describe('console: done, reopen and edit tasks', () => {
  it('on My tasks: reopen a done task, edit its title and due date, clear the date', async () => {
    const task = (await call(t.app, 'POST', '/tasks', { auth: a.auth, body: { title: 'Call back', assigneeId: s.userId, status: 'done' } })).body.data.task.id;
    const all = await get(t.app, '/admin/data/tasks?status=all', s.cookie);
    expect(all.body).toContain(`action="/admin/data/tasks/${task}/reopen"`);
    const reopened = await submit(t.app, s, `/admin/data/tasks/${task}/reopen`, { from: 'tasks' });
    expect(reopened.location).toBe('/admin/data/tasks?notice=reopened');
    expect((await get(t.app, reopened.location!, s.cookie)).body).toContain('Task reopened.');

    const form = await get(t.app, `/admin/data/tasks/${task}/edit?from=tasks`, s.cookie);
    expect(form.status).toBe(200);
    expect(form.body).toContain('value="Call back"');
    const noTitle = await submit(t.app, s, `/admin/data/tasks/${task}/edit`, { from: 'tasks', title: '', dueDate: '2026-12-24' });
    expect(noTitle.status).toBe(400);
    expect(fieldError(noTitle.body, 'title')).toContain('Title');
    const badDate = await submit(t.app, s, `/admin/data/tasks/${task}/edit`, { from: 'tasks', title: 'Call back', dueDate: '2026-13-45' });
    expect(badDate.status).toBe(400);
    expect(fieldError(badDate.body, 'dueDate')).toContain('Due date');
    expect(badDate.body).toContain('value="2026-13-45"');
    const saved = await submit(t.app, s, `/admin/data/tasks/${task}/edit`, { from: 'tasks', title: 'Call back Ada', dueDate: '2026-12-24' });
    expect(saved.location).toBe('/admin/data/tasks?notice=saved');
    expect((await call(t.app, 'GET', `/tasks/${task}`, { auth: a.auth })).body.data.task).toMatchObject({ title: 'Call back Ada', status: 'open', dueDate: '2026-12-24T00:00:00.000Z' });
    await submit(t.app, s, `/admin/data/tasks/${task}/edit`, { from: 'tasks', title: 'Call back Ada', dueDate: '' });
    expect((await call(t.app, 'GET', `/tasks/${task}`, { auth: a.auth })).body.data.task.dueDate).toBeNull();
    const events = await listEvents(t.ctx.database.db, a.orgId, { objectId: task });
    expect(events.slice(1).map((e) => [e.type, e.data.actor])).toEqual([
      ['task.updated', UI(s.userId)],
      ['task.updated', UI(s.userId)],
      ['task.updated', UI(s.userId)],
    ]);
  });

  it('on a timeline: mark done, reopen and edit return to the item page', async () => {
    const deal = (await call(t.app, 'POST', '/deals', { auth: a.auth, body: { name: 'Timeline deal' } })).body.data.deal.id;
    const page = `/admin/data/deals/${deal}`;
    const task = (await call(t.app, 'POST', '/tasks', { auth: a.auth, body: { title: 'Send quote', target: { object: 'deal', id: deal } } })).body.data.task.id;
    const shown = (await get(t.app, page, s.cookie)).body;
    expect(shown).toContain(`action="/admin/data/tasks/${task}/done"`);
    expect(shown).toContain(`href="/admin/data/tasks/${task}/edit?from=timeline"`);
    const done = await submit(t.app, s, `/admin/data/tasks/${task}/done`, { from: 'timeline' });
    expect(done.location).toBe(`${page}#history`);
    expect((await get(t.app, page, s.cookie)).body).toContain(`action="/admin/data/tasks/${task}/reopen"`);
    expect((await call(t.app, 'GET', `/tasks/${task}`, { auth: a.auth })).body.data.task.status).toBe('done');
    expect((await submit(t.app, s, `/admin/data/tasks/${task}/reopen`, { from: 'timeline' })).location).toBe(`${page}#history`);
    const edit = await get(t.app, `/admin/data/tasks/${task}/edit?from=timeline`, s.cookie);
    expect(edit.body).toContain(`href="${page}#history"`);
    const saved = await submit(t.app, s, `/admin/data/tasks/${task}/edit`, { from: 'timeline', title: 'Send the quote', dueDate: '2026-12-01' });
    expect(saved.location).toBe(`${page}#history`);
    expect((await get(t.app, page, s.cookie)).body).toContain('Task: Send the quote');
    const events = await listEvents(t.ctx.database.db, a.orgId, { objectId: task });
    expect(events.map((e) => e.type)).toEqual(['task.created', 'task.completed', 'task.updated', 'task.updated']);
    expect((await submit(t.app, s, '/admin/data/tasks/0123456789abcdef01234567/done', { from: 'timeline' })).status).toBe(404);
  });
});
