import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { listEvents } from '../../src/modules/events/outbox.store.js';
import { findReminder } from '../../src/modules/objects/reminders.store.js';
import { runDueReminders } from '../../src/modules/objects/reminders.service.js';
import { purgeExpiredTrash } from '../../src/modules/shared/trash-purge.service.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call, expectError } from '../helpers/http.js';

/** Notes and tasks follow the item they are on (contract §7, §9): trash and restore, purge, erasure, subject export. */
const DAY = 86_400_000;
const clock = new ManualClock('2026-06-01T10:00:00.000Z');
let t: TestApp;
let a: Seeded;

beforeAll(async () => {
  t = await buildTestApp({ clock });
  a = await seedOrg(t.ctx);
});
afterAll(() => t.close());

async function leadWithNotesAndTasks(body: Record<string, unknown>) {
  const lead = (await call(t.app, 'POST', '/leads', { auth: a.auth, body })).body.data.lead.id as string;
  const note = (await call(t.app, 'POST', '/notes', { auth: a.auth, body: { target: { object: 'lead', id: lead }, body: 'Met at the fair' } })).body.data.note.id as string;
  const task = (await call(t.app, 'POST', '/tasks', { auth: a.auth, body: { title: 'Call back', dueDate: '2026-06-10', target: { object: 'lead', id: lead } } })).body.data.task.id as string;
  expect(await findReminder(t.ctx.database.db, task, 'task')).toBeDefined();
  return { lead, note, task };
}

const typesOf = async (id: string) => (await listEvents(t.ctx.database.db, a.orgId, { objectId: id })).map((e) => e.type);

async function expectGone(note: string, task: string) {
  for (const path of [`/notes/${note}`, `/tasks/${task}`]) expectError(await call(t.app, 'GET', path, { auth: a.auth }), 404, 'NOT_FOUND');
  expect((await call(t.app, 'GET', '/notes?deleted=true', { auth: a.auth })).body.data.notes.map((n: { id: string }) => n.id)).not.toContain(note);
  expect(await findReminder(t.ctx.database.db, task, 'task')).toBeUndefined();
}

describe('an item removed for good takes its notes and tasks along', () => {
  it('DELETE ?permanent=true on a lead purges its notes and tasks, their earlier events with them, each with its purged event', async () => {
    const { lead, note, task } = await leadWithNotesAndTasks({ name: 'Purge me' });
    expect((await call(t.app, 'DELETE', `/leads/${lead}?permanent=true`, { auth: a.auth })).status).toBe(200);
    await expectGone(note, task);
    // Their earlier events went with them (as an erasure's do); the purges are recorded.
    expect(await typesOf(note)).toEqual(['note.purged']);
    expect(await typesOf(task)).toEqual(['task.purged']);
  });

  it('trashing a lead hides its notes and tasks; the scheduler\'s purge past retention removes them with it', async () => {
    const { lead, note, task } = await leadWithNotesAndTasks({ name: 'Expire me' });
    await call(t.app, 'DELETE', `/leads/${lead}`, { auth: a.auth });
    for (const path of [`/notes/${note}`, `/tasks/${task}`]) expectError(await call(t.app, 'GET', path, { auth: a.auth }), 404, 'NOT_FOUND');
    clock.advance(31 * DAY);
    await purgeExpiredTrash(t.ctx, a.orgId);
    await expectGone(note, task);
    expect(await typesOf(task)).toEqual(['task.purged']);
    clock.set('2026-06-01T10:00:00.000Z');
  });
});

const idsOf = async (path: string, key: 'notes' | 'tasks') => (await call(t.app, 'GET', path, { auth: a.auth })).body.data[key].map((i: { id: string }) => i.id) as string[];

describe('notes and tasks follow their item into the trash and back', () => {
  it('hidden from lists, gets, writes and the trash list while the lead is trashed; restored as they were with it', async () => {
    const { lead, note, task } = await leadWithNotesAndTasks({ name: 'Trash me' });
    const trashedNote = (await call(t.app, 'POST', '/notes', { auth: a.auth, body: { target: { object: 'lead', id: lead }, body: 'Already binned' } })).body.data.note.id as string;
    await call(t.app, 'DELETE', `/notes/${trashedNote}`, { auth: a.auth });
    expect((await call(t.app, 'DELETE', `/leads/${lead}`, { auth: a.auth })).status).toBe(200);

    for (const path of [`/notes/${note}`, `/tasks/${task}`]) expectError(await call(t.app, 'GET', path, { auth: a.auth }), 404, 'NOT_FOUND');
    expectError(await call(t.app, 'PATCH', `/notes/${note}`, { auth: a.auth, body: { body: 'edited' } }), 404, 'NOT_FOUND');
    expectError(await call(t.app, 'POST', `/notes/${trashedNote}/restore`, { auth: a.auth }), 404, 'NOT_FOUND');
    expect(await idsOf(`/notes?targetId=${lead}`, 'notes')).toEqual([]);
    expect(await idsOf('/notes', 'notes')).not.toContain(note);
    expect(await idsOf('/notes?deleted=true', 'notes')).not.toContain(trashedNote);
    expect(await idsOf(`/tasks?targetId=${lead}`, 'tasks')).toEqual([]);
    expect(await idsOf('/tasks?sort=dueDate', 'tasks')).not.toContain(task);

    // The task's reminder (09:00 UTC on 2026-06-10) waits while the task is hidden, and fires once it is back.
    clock.set('2026-06-10T10:00:00.000Z');
    await runDueReminders(t.ctx);
    expect(await typesOf(task)).toEqual(['task.created']);

    expect((await call(t.app, 'POST', `/leads/${lead}/restore`, { auth: a.auth })).status).toBe(200);
    await runDueReminders(t.ctx);
    expect(await typesOf(task)).toEqual(['task.created', 'task.due']);
    clock.set('2026-06-01T10:00:00.000Z');
    expect((await call(t.app, 'GET', `/notes/${note}`, { auth: a.auth })).body.data.note.body).toBe('Met at the fair');
    expect(await idsOf(`/notes?targetId=${lead}`, 'notes')).toEqual([note]);
    expect(await idsOf(`/tasks?targetId=${lead}`, 'tasks')).toEqual([task]);
    expect(await idsOf('/notes?deleted=true', 'notes')).toContain(trashedNote);
    expect(await typesOf(note)).toEqual(['note.created']);
  });

  it('the same for a record: its object\'s trash hides the tasks on it, a restore shows them again', async () => {
    const slug = 'things';
    await call(t.app, 'POST', '/objects', { auth: a.auth, body: { slug, name: 'Things', fields: [{ key: 'title', label: 'Title', type: 'text' }], stages: [{ key: 'open', label: 'Open' }] } });
    const record = (await call(t.app, 'POST', `/objects/${slug}/records`, { auth: a.auth, body: { title: 'One' } })).body.data.record.id as string;
    const task = (await call(t.app, 'POST', '/tasks', { auth: a.auth, body: { title: 'Inspect', target: { object: 'record', objectSlug: slug, id: record } } })).body.data.task.id as string;
    await call(t.app, 'DELETE', `/objects/${slug}/records/${record}`, { auth: a.auth });
    expect(await idsOf('/tasks?targetObject=record', 'tasks')).not.toContain(task);
    await call(t.app, 'POST', `/objects/${slug}/records/${record}/restore`, { auth: a.auth });
    expect(await idsOf('/tasks?targetObject=record', 'tasks')).toContain(task);
  });
});

describe('erasure and the subject export', () => {
  it('the export lists the notes and tasks on the subject\'s items; the erasure removes them and every event that described them', async () => {
    const { note, task } = await leadWithNotesAndTasks({ name: 'Ada', email: 'ada.notes@example.com' });
    await call(t.app, 'PATCH', `/notes/${note}`, { auth: a.auth, body: { body: 'Met at the fair; allergic to nuts' } });
    const file = (await call(t.app, 'GET', '/privacy/subject?email=ada.notes%40example.com', { auth: a.auth })).body.data;
    expect(file.notes).toEqual([expect.objectContaining({ id: note, body: 'Met at the fair; allergic to nuts' })]);
    expect(file.tasks).toEqual([expect.objectContaining({ id: task, title: 'Call back' })]);
    expect(file.events.map((e: { type: string }) => e.type)).toEqual(expect.arrayContaining(['lead.created', 'note.created', 'note.updated', 'task.created']));
    const erased = await call(t.app, 'POST', '/privacy/erasures', { auth: a.auth, body: { email: 'ada.notes@example.com' } });
    expect(erased.status, JSON.stringify(erased.body)).toBe(201);
    await expectGone(note, task);
    expect(await typesOf(note)).toEqual(['note.purged']);
    expect(await typesOf(task)).toEqual(['task.purged']);
    const after = (await call(t.app, 'GET', '/privacy/subject?email=ada.notes%40example.com', { auth: a.auth })).body.data;
    expect(after).toMatchObject({ leads: [], notes: [], tasks: [] });
  });
});
