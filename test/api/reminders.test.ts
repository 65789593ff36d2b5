import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { listEvents } from '../../src/modules/events/outbox.store.js';
import { runDueReminders } from '../../src/modules/objects/reminders.service.js';
import { findReminder } from '../../src/modules/objects/reminders.store.js';
import { updateOrganizationSettings } from '../../src/modules/orgs/settings.service.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call, expectError } from '../helpers/http.js';

let t: TestApp;
const clock = new ManualClock('2026-01-01T00:00:00.000Z');

beforeAll(async () => {
  t = await buildTestApp({ clock });
});
afterAll(() => t.close());

/** An organization in `timezone` with a "tasks" object whose `due_on` has role due. */
async function org(timezone: string): Promise<Seeded> {
  const who = await seedOrg(t.ctx, { timezone });
  const res = await call(t.app, 'POST', '/objects', {
    auth: who.auth,
    body: { slug: 'tasks', name: 'Tasks', fields: [{ key: 'title', label: 'Title', type: 'text' }, { key: 'due_on', label: 'Due', type: 'date', role: 'due' }] },
  });
  expect(res.status).toBe(201);
  return who;
}
const createTask = async (who: Seeded, body: Record<string, unknown>) => {
  const res = await call(t.app, 'POST', '/objects/tasks/records', { auth: who.auth, body: { title: 'Task', ...body } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.record.id as string;
};
const patchTask = (who: Seeded, id: string, body: unknown) => call(t.app, 'PATCH', `/objects/tasks/records/${id}`, { auth: who.auth, body });
const dueEvents = async (who: Seeded) => (await listEvents(t.ctx.database.db, who.orgId)).filter((e) => e.type === 'record.due');
const MS = 1;

/** Runs a tick at `at` and returns the ids of the records whose reminder fired in it. */
async function tickAt(who: Seeded, at: string): Promise<string[]> {
  const before = (await dueEvents(who)).length;
  clock.set(at);
  await runDueReminders(t.ctx);
  return (await dueEvents(who)).slice(before).map((e) => e.data.id);
}

describe('record.due at 09:00 organization-local on the due day', () => {
  it('fires once, at 09:00 Paris summer time, as the scheduler, with the object slug', async () => {
    const paris = await org('Europe/Paris');
    clock.set('2026-06-09T12:00:00.000Z');
    const id = await createTask(paris, { due_on: '2026-06-10' });
    expect(await tickAt(paris, '2026-06-10T06:59:59.999Z')).toEqual([]);
    expect(await tickAt(paris, '2026-06-10T07:00:00.000Z')).toEqual([id]);
    expect(await tickAt(paris, '2026-06-10T07:00:30.000Z')).toEqual([]);
    expect(await tickAt(paris, '2026-06-12T07:00:00.000Z')).toEqual([]);
    const [event] = await dueEvents(paris);
    expect(event).toMatchObject({
      type: 'record.due',
      organization: paris.orgId,
      createdAt: '2026-06-10T07:00:00.000Z',
      data: { object: 'record', id, objectSlug: 'tasks', actor: { type: 'SYSTEM', id: 'scheduler', channel: 'API' } },
    });
  });

  const dstDays: [string, string, string][] = [
    ['Europe/Paris', '2026-03-29', '2026-03-29T07:00:00.000Z'], // clocks go forward at 02:00: 09:00 is UTC+2
    ['Europe/Paris', '2026-10-25', '2026-10-25T08:00:00.000Z'], // clocks go back at 03:00: 09:00 is UTC+1
    ['America/New_York', '2026-03-08', '2026-03-08T13:00:00.000Z'], // EDT from 02:00: 09:00 is UTC-4
    ['America/New_York', '2026-11-01', '2026-11-01T14:00:00.000Z'], // EST from 02:00: 09:00 is UTC-5
  ];
  for (const [zone, day, instant] of dstDays) {
    it(`fires at ${instant} on the DST day ${day} in ${zone}`, async () => {
      const who = await org(zone);
      clock.set(`${day.slice(0, 8)}01T00:00:00.000Z`);
      const id = await createTask(who, { due_on: day });
      expect(await tickAt(who, new Date(Date.parse(instant) - MS).toISOString())).toEqual([]);
      expect(await tickAt(who, instant)).toEqual([id]);
      expect(await tickAt(who, new Date(Date.parse(instant) + 3_600_000).toISOString())).toEqual([]);
    });
  }

  it('fires at once for a record created on its due day after 09:00, never for a due date already past', async () => {
    const ny = await org('America/New_York');
    clock.set('2026-06-10T20:00:00.000Z'); // 16:00 in New York
    const today = await createTask(ny, { due_on: '2026-06-10' });
    const yesterday = await createTask(ny, { due_on: '2026-06-09' });
    const noDue = await createTask(ny, {});
    expect(await tickAt(ny, '2026-06-10T20:00:01.000Z')).toEqual([today]);
    expect(await tickAt(ny, '2026-06-20T20:00:00.000Z')).toEqual([]);
    expect(await findReminder(t.ctx.database.db, yesterday)).toBeUndefined();
    expect(await findReminder(t.ctx.database.db, noDue)).toBeUndefined();
  });

  it('uses the local date: late evening UTC is already the due day in Tokyo', async () => {
    const tokyo = await org('Asia/Tokyo');
    clock.set('2026-06-09T12:00:00.000Z'); // 21:00 on 9 June in Tokyo
    const id = await createTask(tokyo, { due_on: '2026-06-10' });
    expect(await tickAt(tokyo, '2026-06-09T23:59:59.999Z')).toEqual([]);
    expect(await tickAt(tokyo, '2026-06-10T00:00:00.000Z')).toEqual([id]); // 09:00 JST
  });
});

describe('re-planning', () => {
  it('follows a due date changed before it fired, and a cleared one never fires', async () => {
    const utc = await org('UTC');
    clock.set('2026-06-01T00:00:00.000Z');
    const moved = await createTask(utc, { due_on: '2026-06-10' });
    const cleared = await createTask(utc, { due_on: '2026-06-10' });
    await patchTask(utc, moved, { due_on: '2026-06-12' });
    await patchTask(utc, cleared, { due_on: null });
    expect(await tickAt(utc, '2026-06-10T09:00:00.000Z')).toEqual([]);
    expect(await tickAt(utc, '2026-06-12T09:00:00.000Z')).toEqual([moved]);
  });

  it('never fires twice for an unchanged due date, fires again when moved to another day after firing', async () => {
    const utc = await org('UTC');
    clock.set('2026-07-01T00:00:00.000Z');
    const id = await createTask(utc, { due_on: '2026-07-02' });
    expect(await tickAt(utc, '2026-07-02T09:00:00.000Z')).toEqual([id]);
    await patchTask(utc, id, { title: 'Renamed' });
    await patchTask(utc, id, { due_on: '2026-07-02T03:00:00Z' }); // the same day
    expect(await tickAt(utc, '2026-07-02T10:00:00.000Z')).toEqual([]);
    await patchTask(utc, id, { due_on: '2026-07-05' });
    expect(await tickAt(utc, '2026-07-04T09:00:00.000Z')).toEqual([]);
    expect(await tickAt(utc, '2026-07-05T09:00:00.000Z')).toEqual([id]);
    await patchTask(utc, id, { due_on: '2026-07-01' }); // moved into the past: nothing
    expect(await tickAt(utc, '2026-07-09T09:00:00.000Z')).toEqual([]);
  });

  it('moves pending reminders to the organization\'s new time zone, keeps fired ones fired', async () => {
    const who = await org('UTC');
    clock.set('2026-08-01T00:00:00.000Z');
    const early = await createTask(who, { due_on: '2026-08-01' });
    const later = await createTask(who, { due_on: '2026-08-03' });
    expect(await tickAt(who, '2026-08-01T09:00:00.000Z')).toEqual([early]);
    await updateOrganizationSettings(t.ctx, who.orgId, { timezone: 'America/Los_Angeles' });
    expect(await tickAt(who, '2026-08-03T09:00:00.000Z')).toEqual([]);
    expect(await tickAt(who, '2026-08-03T16:00:00.000Z')).toEqual([later]); // 09:00 PDT
    expect((await dueEvents(who)).map((e) => e.data.id)).toEqual([early, later]);
  });

  it('drops a pending reminder whose day is already over in the new time zone', async () => {
    const who = await org('UTC');
    clock.set('2026-09-09T23:00:00.000Z'); // still 9 September in UTC, 13:00 on 10 September in Kiritimati
    const id = await createTask(who, { due_on: '2026-09-09' });
    await updateOrganizationSettings(t.ctx, who.orgId, { timezone: 'Pacific/Kiritimati' });
    expect(await tickAt(who, '2026-09-09T23:00:01.000Z')).toEqual([]);
    expect(await findReminder(t.ctx.database.db, id)).toBeUndefined();
  });

  it('plans with the time zone the organization has at the moment of the change', async () => {
    const who = await org('Europe/Paris');
    clock.set('2026-05-01T00:00:00.000Z');
    await updateOrganizationSettings(t.ctx, who.orgId, { name: 'Renamed only' });
    const id = await createTask(who, { due_on: '2026-05-04' });
    expect(await tickAt(who, '2026-05-04T07:00:00.000Z')).toEqual([id]);
  });
});

describe('updateOrganizationSettings', () => {
  it('renames and changes the time zone, refusing bad input and unknown organizations', async () => {
    const who = await org('UTC');
    const updated = await updateOrganizationSettings(t.ctx, who.orgId, { name: '  New name ', timezone: 'Asia/Kolkata' });
    expect(updated).toMatchObject({ id: who.orgId, name: 'New name', timezone: 'Asia/Kolkata' });
    const me = await call(t.app, 'GET', '/me', { auth: who.auth });
    expect(me.body.data.me.organization).toMatchObject({ name: 'New name', timezone: 'Asia/Kolkata' });
    await expect(updateOrganizationSettings(t.ctx, who.orgId, { timezone: 'Mars/Olympus', name: ' ' })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      errors: [expect.objectContaining({ field: 'name', code: 'required' }), expect.objectContaining({ field: 'timezone', code: 'invalid_value' })],
    });
    await expect(updateOrganizationSettings(t.ctx, '0000000000000000deadbeef', { name: 'X' })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('moves the overdue line with the new time zone', async () => {
    const who = await org('UTC');
    clock.set('2026-10-10T20:00:00.000Z');
    await createTask(who, { due_on: '2026-10-10' });
    const overdue = async () => (await call(t.app, 'GET', '/objects/tasks/records?overdue=true', { auth: who.auth })).body.data.pagination.total;
    expect(await overdue()).toBe(0);
    await updateOrganizationSettings(t.ctx, who.orgId, { timezone: 'Asia/Tokyo' }); // 05:00 on 11 October
    expect(await overdue()).toBe(1);
    expectError(await call(t.app, 'GET', '/objects/tasks/records?overdue=yes', { auth: who.auth }), 400, 'VALIDATION_FAILED');
  });
});
