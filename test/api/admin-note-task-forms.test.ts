import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../../src/modules/events/outbox.store.js';
import { setUserDeactivatedAt } from '../../src/modules/orgs/users.store.js';
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

  it('edit gives a task to a colleague or to no one, and keeps an assignee deactivated since', async () => {
    const colleague = await addConsoleUser(t.ctx, a.orgId, { name: 'Cole Colleague' });
    const leaver = await addConsoleUser(t.ctx, a.orgId, { name: 'Lee Leaver' });
    const task = (await call(t.app, 'POST', '/tasks', { auth: a.auth, body: { title: 'Hand over', assigneeId: s.userId } })).body.data.task.id;
    const assigneeOf = async () => (await call(t.app, 'GET', `/tasks/${task}`, { auth: a.auth })).body.data.task.assigneeId;
    const form = (await get(t.app, `/admin/data/tasks/${task}/edit?from=tasks`, s.cookie)).body;
    expect(form).toMatch(new RegExp(`<option value="${s.userId}" selected>Nora Notes</option>`));
    expect(form).toContain(`<option value="${colleague.id}">Cole Colleague</option>`);

    const given = await submit(t.app, s, `/admin/data/tasks/${task}/edit`, { from: 'tasks', title: 'Hand over', dueDate: '', assigneeId: colleague.id });
    expect(given.status, given.body).toBe(303);
    expect(await assigneeOf()).toBe(colleague.id);
    const [, event] = await listEvents(t.ctx.database.db, a.orgId, { objectId: task });
    expect(event).toMatchObject({ type: 'task.updated', data: { changes: { before: { assigneeId: s.userId }, after: { assigneeId: colleague.id } } } });
    await submit(t.app, s, `/admin/data/tasks/${task}/edit`, { from: 'tasks', title: 'Hand over', dueDate: '', assigneeId: '' });
    expect(await assigneeOf()).toBeNull();
    const stranger = await seedOrg(t.ctx);
    const foreign = await addConsoleUser(t.ctx, stranger.orgId, { name: 'Far Away' });
    const refused = await submit(t.app, s, `/admin/data/tasks/${task}/edit`, { from: 'tasks', title: 'Hand over', dueDate: '', assigneeId: foreign.id });
    expect(refused.status).toBe(400);
    expect(fieldError(refused.body, 'assigneeId')).toContain('Assignee');
    expect(await assigneeOf()).toBeNull();

    // Assigned before the assignee left: the form still shows them, and saving a new title keeps them (the API
    // would refuse them as a new assignee).
    await submit(t.app, s, `/admin/data/tasks/${task}/edit`, { from: 'tasks', title: 'Hand over', dueDate: '', assigneeId: leaver.id });
    await setUserDeactivatedAt(t.ctx.database.db, a.orgId, leaver.id, new Date().toISOString(), new Date().toISOString());
    expect((await get(t.app, `/admin/data/tasks/${task}/edit?from=tasks`, s.cookie)).body).toContain(`<option value="${leaver.id}" selected>Lee Leaver (deactivated)</option>`);
    const renamed = await submit(t.app, s, `/admin/data/tasks/${task}/edit`, { from: 'tasks', title: 'Hand over now', dueDate: '', assigneeId: leaver.id });
    expect(renamed.status, renamed.body).toBe(303);
    expect((await call(t.app, 'GET', `/tasks/${task}`, { auth: a.auth })).body.data.task).toMatchObject({ title: 'Hand over now', assigneeId: leaver.id });
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

describe('console: adding tasks', () => {
  const taskAdded = (page: string) => `${page}?notice=taskAdded#history`;

  it('a lead\'s timeline adds a task like POST /tasks, for the signed-in user by default: on the timeline, in My tasks, in the API', async () => {
    const lead = (await call(t.app, 'POST', '/leads', { auth: a.auth, body: { name: 'Tess Tasks' } })).body.data.lead.id;
    const page = `/admin/data/leads/${lead}`;
    const shown = (await get(t.app, page, s.cookie)).body;
    expect(shown).toContain('<legend>Add a task</legend>');
    expect(shown).toMatch(/id="f-dueDate" name="dueDate" type="date"/);
    expect(shown).toContain(`<option value="${s.userId}" selected>Nora Notes</option>`);
    const res = await submit(t.app, s, '/admin/data/tasks', { object: 'lead', id: lead, title: 'Call Tess back', dueDate: '2026-12-03', assigneeId: s.userId });
    expect(res.status, res.body).toBe(303);
    expect(res.location).toBe(taskAdded(page));
    const after = (await get(t.app, res.location!, s.cookie)).body;
    expect(after).toContain('Task added.');
    expect(after).toContain('Task: Call Tess back');
    const mine = (await get(t.app, '/admin/data/tasks', s.cookie)).body;
    expect(mine).toContain('Call Tess back');
    expect(mine).toContain(`<a href="${page}">Tess Tasks</a>`);
    const tasks = (await call(t.app, 'GET', `/tasks?targetId=${lead}`, { auth: a.auth })).body.data.tasks;
    expect(tasks).toEqual([expect.objectContaining({ title: 'Call Tess back', target: { object: 'lead', id: lead }, dueDate: '2026-12-03T00:00:00.000Z', assigneeId: s.userId, status: 'open' })]);
    const events = await listEvents(t.ctx.database.db, a.orgId, { objectId: tasks[0].id });
    expect(events.map((e) => [e.type, e.data.actor])).toEqual([['task.created', UI(s.userId)]]);
  });

  it('a custom-object record\'s timeline adds a task for another user, undated, shown in their My tasks only', async () => {
    await call(t.app, 'POST', '/objects', { auth: a.auth, body: { slug: 'site_visits', name: 'Site visits', fields: [{ key: 'title', label: 'Title', type: 'text' }] } });
    const record = (await call(t.app, 'POST', '/objects/site_visits/records', { auth: a.auth, body: { title: 'Warehouse' } })).body.data.record.id;
    const page = `/admin/data/objects/site_visits/${record}`;
    const colleague = await signIn(t.app, await addConsoleUser(t.ctx, a.orgId, { name: 'Colin Colleague' }));
    expect((await get(t.app, page, s.cookie)).body).toContain(`<option value="${colleague.userId}">Colin Colleague</option>`);
    const res = await submit(t.app, s, '/admin/data/tasks', { object: 'record', id: record, objectSlug: 'site_visits', title: 'Book the visit', dueDate: '', assigneeId: colleague.userId });
    expect(res.location).toBe(taskAdded(page));
    expect((await get(t.app, page, s.cookie)).body).toContain('Task: Book the visit');
    expect((await get(t.app, '/admin/data/tasks', colleague.cookie)).body).toContain(`<a href="${page}">Warehouse</a>`);
    expect((await get(t.app, '/admin/data/tasks', s.cookie)).body).not.toContain('Book the visit');
    const tasks = (await call(t.app, 'GET', `/tasks?targetId=${record}`, { auth: a.auth })).body.data.tasks;
    expect(tasks).toEqual([expect.objectContaining({ title: 'Book the visit', target: { object: 'record', id: record, objectSlug: 'site_visits' }, dueDate: null, assigneeId: colleague.userId })]);
  });

  it('refuses a missing title or a day that does not exist, keeping what was typed, and adds nothing', async () => {
    const lead = (await call(t.app, 'POST', '/leads', { auth: a.auth, body: { name: 'Refused' } })).body.data.lead.id;
    const noTitle = await submit(t.app, s, '/admin/data/tasks', { object: 'lead', id: lead, title: '  ', dueDate: '2026-12-24', assigneeId: '' });
    expect(noTitle.status).toBe(400);
    expect(fieldError(noTitle.body, 'title')).toContain('Title');
    expect(noTitle.body).toContain('value="2026-12-24"');
    expect(noTitle.body).not.toContain(`<option value="${s.userId}" selected>`);
    expect(noTitle.body).toContain(`href="/admin/data/leads/${lead}"`);
    const badDate = await submit(t.app, s, '/admin/data/tasks', { object: 'lead', id: lead, title: 'Wrap presents', dueDate: '2026-02-30', assigneeId: s.userId });
    expect(badDate.status).toBe(400);
    expect(fieldError(badDate.body, 'dueDate')).toContain('Due date');
    expect(badDate.body).toContain('value="Wrap presents"');
    expect(badDate.body).toContain('value="2026-02-30"');
    expect((await call(t.app, 'GET', `/tasks?targetId=${lead}`, { auth: a.auth })).body.data.tasks).toEqual([]);
  });

  it('requires the session\'s CSRF token, and keeps other organizations\' items and users out', async () => {
    const lead = (await call(t.app, 'POST', '/leads', { auth: a.auth, body: { name: 'Guarded' } })).body.data.lead.id;
    const forged = await post(t.app, '/admin/data/tasks', { object: 'lead', id: lead, title: 'Forged' }, { cookie: s.cookie, csrf: 'forged' });
    expect(forged.status).toBe(403);
    const b = await seedOrg(t.ctx);
    const outsider = await signIn(t.app, await addConsoleUser(t.ctx, b.orgId, { name: 'Otto Outsider' }));
    const foreign = await submit(t.app, outsider, '/admin/data/tasks', { object: 'lead', id: lead, title: 'Sneak in', assigneeId: outsider.userId });
    expect(foreign.status).toBe(400);
    expect(foreign.body).toContain('Item is not a live lead of this organization');
    const foreignAssignee = await submit(t.app, s, '/admin/data/tasks', { object: 'lead', id: lead, title: 'Hand over', assigneeId: outsider.userId });
    expect(foreignAssignee.status).toBe(400);
    expect(fieldError(foreignAssignee.body, 'assigneeId')).toContain('Assignee is not an active user of this organization');
    expect((await submit(t.app, s, '/admin/data/tasks', { object: 'invoice', id: lead, title: 'Nowhere' })).status).toBe(404);
    expect((await call(t.app, 'GET', `/tasks?targetId=${lead}`, { auth: a.auth })).body.data.tasks).toEqual([]);
    expect((await call(t.app, 'GET', '/tasks', { auth: b.auth })).body.data.tasks).toEqual([]);
  });

  it('My tasks has a "New task" page for a task on no item', async () => {
    expect((await get(t.app, '/admin/data/tasks', s.cookie)).body).toContain('href="/admin/data/tasks/new"');
    const form = await get(t.app, '/admin/data/tasks/new', s.cookie);
    expect(form.status).toBe(200);
    expect(form.body).toContain(`<option value="${s.userId}" selected>Nora Notes</option>`);
    const refused = await submit(t.app, s, '/admin/data/tasks', { title: '', dueDate: '2027-01-04', assigneeId: s.userId });
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('value="2027-01-04"');
    expect(refused.body).toContain('href="/admin/data/tasks">Back to My tasks</a>');
    const res = await submit(t.app, s, '/admin/data/tasks', { title: 'Plan the quarter', dueDate: '2027-01-04', assigneeId: s.userId });
    expect(res.location).toBe('/admin/data/tasks?notice=added');
    const mine = (await get(t.app, res.location!, s.cookie)).body;
    expect(mine).toContain('Task added.');
    expect(mine).toContain('Plan the quarter');
    const tasks = (await call(t.app, 'GET', `/tasks?assigneeId=${s.userId}`, { auth: a.auth })).body.data.tasks;
    expect(tasks.find((task: { title: string }) => task.title === 'Plan the quarter')).toMatchObject({ target: null, dueDate: '2027-01-04T00:00:00.000Z' });
  });
});
