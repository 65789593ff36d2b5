import type { CrmClient } from '@crm/sdk';
import { describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/test-app.js';
import type { Seeded } from '../helpers/seed.js';
import { useSdkApp } from '../helpers/sdk.js';
import { call } from '../helpers/http.js';

/** client.notes, client.tasks, client.users and client.timeline against the running app. */
describe('SDK notes, tasks and timeline', () => {
  let t: TestApp;
  let s: Seeded;
  let crm: CrmClient;

  useSdkApp(async (app) => {
    ({ t, s, crm } = app);
    await call(t.app, 'POST', '/objects', { auth: s.auth, body: { slug: 'visits', name: 'Visits', fields: [{ key: 'title', label: 'Title', type: 'text' }] } });
  });

  it('notes and tasks on a deal, then its whole timeline by cursor iteration', async () => {
    const deal = await crm.deals.create({ name: 'Renewal' });
    const note = await crm.notes.create({ target: { object: 'deal', id: deal.id }, body: 'Budget approved' });
    expect(await crm.notes.update(note.id, 'Budget approved by finance')).toMatchObject({ body: 'Budget approved by finance' });
    const task = await crm.tasks.create({ title: 'Send the contract', target: { object: 'deal', id: deal.id }, dueDate: '2026-12-01' });
    expect(await crm.tasks.complete(task.id)).toMatchObject({ status: 'done' });
    for (let i = 0; i < 3; i++) await crm.notes.create({ target: { object: 'deal', id: deal.id }, body: `follow-up ${i}` });
    const ids: string[] = [];
    for await (const n of crm.notes.iterate({ targetId: deal.id, limit: 2 })) ids.push(n.id);
    expect(ids).toHaveLength(4);
    const entries = [];
    for await (const e of crm.timeline.iterate({ object: 'deal', id: deal.id }, { limit: 2 })) entries.push(e);
    expect(entries.map((e) => e.type).sort()).toEqual(['event', 'note', 'note', 'note', 'note', 'task']);
    expect(entries.find((e) => e.type === 'task')?.task).toMatchObject({ id: task.id, status: 'done' });
    const notes = [];
    for await (const e of crm.timeline.iterate({ object: 'deal', id: deal.id }, { limit: 1, types: 'note,task', createdAfter: '2020-01-01T00:00:00Z' })) notes.push(e.type);
    expect(notes.sort()).toEqual(['note', 'note', 'note', 'note', 'task']);
    expect((await crm.tasks.list({ status: 'done' })).tasks.map((x) => x.id)).toEqual([task.id]);
  });

  it('iterates tasks and users by cursor in any sort, with their filters', async () => {
    for (const dueDate of ['2027-02-01', '2027-01-01', undefined]) await crm.tasks.create({ title: `due ${dueDate ?? 'never'}`, ...(dueDate ? { dueDate } : {}) });
    const titles: string[] = [];
    for await (const x of crm.tasks.iterate({ status: 'open', sort: 'dueDate', limit: 1, createdAfter: '2020-01-01T00:00:00Z' })) titles.push(x.title);
    expect(titles.filter((title) => title.startsWith('due '))).toEqual(['due 2027-01-01', 'due 2027-02-01', 'due never']);
    const pages = [];
    for await (const page of crm.tasks.pages({ sort: 'dueDate', limit: 1 })) pages.push(page.pagination);
    expect(pages.slice(1).every((p) => p.total === undefined)).toBe(true);
    const users = [];
    for await (const u of crm.users.iterate({ sort: 'name', active: true, limit: 1 })) users.push(u.id);
    expect(users).toContain(s.userId);
  });

  it('reads a record\'s timeline by its object\'s slug, and trashes and restores a task', async () => {
    const record = await crm.records('visits').create({ title: 'Flat' });
    await crm.notes.create({ target: { object: 'record', objectSlug: 'visits', id: record.id }, body: 'Keys at the desk' });
    const page = await crm.timeline.list({ object: 'record', objectSlug: 'visits', id: record.id });
    expect(page.timeline.map((e) => e.type)).toEqual(['note', 'event']);
    expect(page.pagination.nextCursor).toBeNull();
    const task = await crm.tasks.create({ title: 'Gone soon' });
    expect((await crm.tasks.delete(task.id)).deletedAt).not.toBeNull();
    expect((await crm.tasks.restore(task.id)).deletedAt).toBeNull();
  });
});
