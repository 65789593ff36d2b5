import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { listEvents } from '../../src/modules/events/outbox.store.js';
import { findReminder } from '../../src/modules/objects/reminders.store.js';
import { purgeExpiredTrash } from '../../src/modules/shared/trash-purge.service.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call, expectError } from '../helpers/http.js';

/** Notes and tasks follow the item they are on (contract §7, §9): purge, erasure, subject export. */
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
  it('DELETE ?permanent=true on a lead purges its notes and tasks, each with its purged event', async () => {
    const { lead, note, task } = await leadWithNotesAndTasks({ name: 'Purge me' });
    expect((await call(t.app, 'DELETE', `/leads/${lead}?permanent=true`, { auth: a.auth })).status).toBe(200);
    await expectGone(note, task);
    expect(await typesOf(note)).toEqual(['note.created', 'note.purged']);
    expect(await typesOf(task)).toEqual(['task.created', 'task.purged']);
  });

  it('trashing a lead keeps its notes; the scheduler\'s purge past retention removes them with it', async () => {
    const { lead, note, task } = await leadWithNotesAndTasks({ name: 'Expire me' });
    await call(t.app, 'DELETE', `/leads/${lead}`, { auth: a.auth });
    expect((await call(t.app, 'GET', `/notes/${note}`, { auth: a.auth })).status).toBe(200);
    clock.advance(31 * DAY);
    await purgeExpiredTrash(t.ctx, a.orgId);
    await expectGone(note, task);
    expect(await typesOf(task)).toEqual(['task.created', 'task.purged']);
    clock.set('2026-06-01T10:00:00.000Z');
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
