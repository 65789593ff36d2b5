import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { listEvents } from '../../src/modules/events/outbox.store.js';
import { runDueReminders } from '../../src/modules/objects/reminders.service.js';
import { findReminder } from '../../src/modules/objects/reminders.store.js';
import { updateOrganizationSettings } from '../../src/modules/orgs/settings.service.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { addKey, addUser, seedOrg, type Seeded } from '../helpers/seed.js';
import { call, expectError } from '../helpers/http.js';

let t: TestApp;
let a: Seeded;
let b: Seeded;
let dealId: string;
const clock = new ManualClock('2026-03-01T12:00:00.000Z');

beforeAll(async () => {
  t = await buildTestApp({ clock });
  a = await seedOrg(t.ctx, { timezone: 'Pacific/Auckland' });
  b = await seedOrg(t.ctx);
  dealId = (await call(t.app, 'POST', '/deals', { auth: a.auth, body: { name: 'Big deal' } })).body.data.deal.id;
});
afterAll(() => t.close());

const createTask = (who: { auth: Record<string, string> }, body: unknown) => call(t.app, 'POST', '/tasks', { auth: who.auth, body });
const eventsOf = async (who: Seeded, id: string) => (await listEvents(t.ctx.database.db, who.orgId, { objectId: id })).map((e) => e.type);

describe('POST /tasks', () => {
  it('creates an open task on a deal, for a user, due on a day (date-only rules)', async () => {
    const res = await createTask(a, { title: ' Send the proposal ', target: { object: 'deal', id: dealId }, assigneeId: a.userId, dueDate: '2026-03-10T15:00:00Z' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body.data.task).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{24}$/),
      title: 'Send the proposal',
      target: { object: 'deal', id: dealId },
      dueDate: '2026-03-11T00:00:00.000Z',
      assigneeId: a.userId,
      status: 'open',
      completedAt: null,
      createdAt: '2026-03-01T12:00:00.000Z',
      updatedAt: '2026-03-01T12:00:00.000Z',
      deletedAt: null,
    });
    expect(await eventsOf(a, res.body.data.task.id)).toEqual(['task.created']);
  });

  it('takes no target, and refuses a bad day, an unknown assignee or target, a bad status — every field at once', async () => {
    expect((await createTask(a, { title: 'Plan the quarter' })).body.data.task).toMatchObject({ target: null, dueDate: null, status: 'open' });
    const otherUser = await addUser(t.ctx, b.orgId);
    const errors = expectError(await createTask(a, { title: 'x', dueDate: '2026-02-30', assigneeId: otherUser, target: { object: 'lead', id: dealId } }), 400, 'VALIDATION_FAILED');
    expect(errors.map((e) => [e.field, e.code]).sort()).toEqual([['assigneeId', 'not_found'], ['dueDate', 'invalid_date'], ['target.id', 'not_found']]);
    const schema = expectError(await createTask(a, { title: '', status: 'later', priority: 1 }), 400, 'VALIDATION_FAILED');
    expect(schema.map((e) => e.field).sort()).toEqual(['priority', 'status', 'title']);
  });
});

describe('PATCH /tasks/{id}', () => {
  it('completing records task.completed with completedAt; other changes task.updated; reopening clears completedAt', async () => {
    const id = (await createTask(a, { title: 'Call back' })).body.data.task.id;
    clock.advance(60_000);
    const done = await call(t.app, 'PATCH', `/tasks/${id}`, { auth: a.auth, body: { status: 'done', title: 'Called back' } });
    expect(done.body.data.task).toMatchObject({ status: 'done', title: 'Called back', completedAt: '2026-03-01T12:01:00.000Z' });
    const same = await call(t.app, 'PATCH', `/tasks/${id}`, { auth: a.auth, body: { status: 'done' } });
    expect(same.body.data.task.updatedAt).toBe('2026-03-01T12:01:00.000Z');
    const reopened = await call(t.app, 'PATCH', `/tasks/${id}`, { auth: a.auth, body: { status: 'open' } });
    expect(reopened.body.data.task).toMatchObject({ status: 'open', completedAt: null });
    const events = await listEvents(t.ctx.database.db, a.orgId, { objectId: id });
    expect(events.map((e) => [e.type, e.data.changes])).toEqual([
      ['task.created', expect.anything()],
      ['task.completed', { before: { status: 'open', completedAt: null }, after: { status: 'done', completedAt: '2026-03-01T12:01:00.000Z' } }],
      ['task.updated', { before: { title: 'Call back' }, after: { title: 'Called back' } }],
      ['task.updated', { before: { status: 'done', completedAt: '2026-03-01T12:01:00.000Z' }, after: { status: 'open', completedAt: null } }],
    ]);
  });
});

describe('GET /tasks', () => {
  it('filters by status, assignee, target, due days, and overdue in the organization\'s time zone', async () => {
    const o = await seedOrg(t.ctx, { timezone: 'Pacific/Auckland' });
    const rep = await addUser(t.ctx, o.orgId);
    const lead = (await call(t.app, 'POST', '/leads', { auth: o.auth, body: { name: 'Ada' } })).body.data.lead.id;
    const mk = async (body: Record<string, unknown>) => (await createTask(o, { title: 'T', ...body })).body.data.task.id as string;
    // 2026-03-01T12:00Z is already 2026-03-02 in Auckland: a task due 03-01 is overdue there, one due 03-02 is not.
    const dueYesterday = await mk({ dueDate: '2026-03-01', assigneeId: rep });
    const dueToday = await mk({ dueDate: '2026-03-02', target: { object: 'lead', id: lead } });
    const doneLate = await mk({ dueDate: '2026-02-01', status: 'done' });
    const list = async (q: string) => (await call(t.app, 'GET', `/tasks?${q}`, { auth: o.auth })).body.data.tasks.map((x: { id: string }) => x.id);
    clock.set('2026-03-01T12:00:00.000Z');
    expect(await list('overdue=true')).toEqual([dueYesterday]);
    expect(await list('status=done')).toEqual([doneLate]);
    expect(await list(`assigneeId=${rep}`)).toEqual([dueYesterday]);
    expect(await list(`targetId=${lead}`)).toEqual([dueToday]);
    expect(await list('dueAfter=2026-02-01&dueBefore=2026-03-02')).toEqual([dueYesterday]);
    expectError(await call(t.app, 'GET', '/tasks?overdue=true&status=done', { auth: o.auth }), 400, 'VALIDATION_FAILED');
    expectError(await call(t.app, 'GET', '/tasks?dueBefore=tomorrow', { auth: o.auth }), 400, 'VALIDATION_FAILED');
    expectError(await call(t.app, 'GET', '/tasks?sortBy=x', { auth: o.auth }), 400, 'VALIDATION_FAILED');
  });
});

describe('task.due', () => {
  it('fires once at 09:00 in the organization\'s time zone on the due day, not for done or trashed tasks, again after a restore', async () => {
    const o = await seedOrg(t.ctx, { timezone: 'Europe/Paris' });
    clock.set('2026-04-01T08:00:00.000Z');
    const id = (await createTask(o, { title: 'Renew', dueDate: '2026-04-03' })).body.data.task.id;
    const done = (await createTask(o, { title: 'Done', dueDate: '2026-04-03', status: 'done' })).body.data.task.id;
    const trashed = (await createTask(o, { title: 'Gone', dueDate: '2026-04-03' })).body.data.task.id;
    await call(t.app, 'DELETE', `/tasks/${trashed}`, { auth: o.auth });
    expect(await findReminder(t.ctx.database.db, id, 'task')).toMatchObject({ fireAt: '2026-04-03T07:00:00.000Z', firedAt: null });
    expect(await findReminder(t.ctx.database.db, done, 'task')).toBeUndefined();
    clock.set('2026-04-03T06:59:59.999Z');
    await runDueReminders(t.ctx);
    expect(await eventsOf(o, id)).toEqual(['task.created']);
    clock.set('2026-04-03T07:00:00.000Z');
    await runDueReminders(t.ctx);
    await runDueReminders(t.ctx);
    const due = (await listEvents(t.ctx.database.db, o.orgId, { objectId: id })).filter((e) => e.type === 'task.due');
    expect(due.map((e) => e.data)).toEqual([{ object: 'task', id, description: 'Task due on 2026-04-03', changes: { before: {}, after: {} }, actor: { type: 'SYSTEM', id: 'scheduler', channel: 'API' } }]);
    expect(await eventsOf(o, trashed)).toEqual(['task.created', 'task.deleted']);
    clock.set('2026-04-02T07:00:00.000Z');
    await call(t.app, 'POST', `/tasks/${trashed}/restore`, { auth: o.auth });
    clock.set('2026-04-03T07:00:00.000Z');
    await runDueReminders(t.ctx);
    expect(await eventsOf(o, trashed)).toEqual(['task.created', 'task.deleted', 'task.restored', 'task.due']);
  });
});

describe('task.due after a time-zone change', () => {
  it('moves to 09:00 of the same day in the new zone', async () => {
    const o = await seedOrg(t.ctx, { timezone: 'Europe/Paris' });
    clock.set('2026-08-01T08:00:00.000Z');
    const id = (await createTask(o, { title: 'Moved', dueDate: '2026-08-03' })).body.data.task.id;
    expect((await findReminder(t.ctx.database.db, id, 'task'))?.fireAt).toBe('2026-08-03T07:00:00.000Z');
    await updateOrganizationSettings(t.ctx, o.orgId, { timezone: 'America/Los_Angeles' });
    expect((await findReminder(t.ctx.database.db, id, 'task'))?.fireAt).toBe('2026-08-03T16:00:00.000Z');
  });
});

describe('access', () => {
  it('is confined to the organization and to the tasks scopes', async () => {
    const id = (await createTask(a, { title: 'Mine' })).body.data.task.id;
    for (const [method, path, body] of [['GET', `/tasks/${id}`], ['PATCH', `/tasks/${id}`, { title: 'x' }], ['DELETE', `/tasks/${id}`]] as const) {
      expectError(await call(t.app, method, path, { auth: b.auth, ...(body ? { body } : {}) }), 404, 'NOT_FOUND');
    }
    const reader = await addKey(t.ctx, a.orgId, ['tasks:read']);
    expect((await call(t.app, 'GET', `/tasks/${id}`, { auth: reader.auth })).status).toBe(200);
    expectError(await createTask(reader, { title: 'x' }), 403, 'INSUFFICIENT_SCOPE');
    const notesOnly = await addKey(t.ctx, a.orgId, ['notes:read', 'notes:write']);
    expectError(await call(t.app, 'GET', '/tasks', { auth: notesOnly.auth }), 403, 'INSUFFICIENT_SCOPE');
  });
});
