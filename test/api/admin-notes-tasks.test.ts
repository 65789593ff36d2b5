import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../../src/modules/events/outbox.store.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';
import { addConsoleUser, get, signIn, submit, type ConsoleSession } from '../helpers/admin.js';

let t: TestApp;
let a: Seeded;
let s: ConsoleSession;

beforeAll(async () => {
  t = await buildTestApp();
  a = await seedOrg(t.ctx, { timezone: 'Europe/Paris' });
  s = await signIn(t.app, await addConsoleUser(t.ctx, a.orgId, { name: 'Clara Console' }));
});
afterAll(() => t?.close());

describe('console timeline', () => {
  it('lead, account, deal and record pages show the item\'s changes, notes and tasks', async () => {
    const lead = (await call(t.app, 'POST', '/leads', { auth: a.auth, body: { name: 'Ada' } })).body.data.lead.id;
    const account = (await call(t.app, 'POST', '/accounts', { auth: a.auth, body: { name: 'Acme' } })).body.data.account.id;
    const deal = (await call(t.app, 'POST', '/deals', { auth: a.auth, body: { name: 'Deal' } })).body.data.deal.id;
    await call(t.app, 'POST', '/objects', { auth: a.auth, body: { slug: 'visits', name: 'Visits', fields: [{ key: 'title', label: 'Title', type: 'text' }] } });
    const record = (await call(t.app, 'POST', '/objects/visits/records', { auth: a.auth, body: { title: 'Flat' } })).body.data.record.id;
    const targets = [
      { target: { object: 'lead', id: lead }, page: `/admin/data/leads/${lead}`, created: 'Lead created' },
      { target: { object: 'account', id: account }, page: `/admin/data/accounts/${account}`, created: 'Account created' },
      { target: { object: 'deal', id: deal }, page: `/admin/data/deals/${deal}`, created: 'Deal created' },
      { target: { object: 'record', id: record, objectSlug: 'visits' }, page: `/admin/data/objects/visits/${record}`, created: 'record created' },
    ];
    for (const { target, page, created } of targets) {
      await call(t.app, 'POST', '/notes', { auth: a.auth, body: { target, body: `Note on <${target.object}>` } });
      await call(t.app, 'POST', '/tasks', { auth: a.auth, body: { title: `Follow up ${target.object}`, target, dueDate: '2026-12-01' } });
      const res = await get(t.app, page, s.cookie);
      expect(res.status, page).toBe(200);
      expect(res.body).toContain(`Note on &lt;${target.object}&gt;`);
      expect(res.body).toContain(`Task: Follow up ${target.object}`);
      expect(res.body).toContain(created);
    }
  });
});

describe('My tasks', () => {
  it('lists the open tasks assigned to the signed-in user and marks one done through the UI channel', async () => {
    const mine = (await call(t.app, 'POST', '/tasks', { auth: a.auth, body: { title: 'Mine, overdue', assigneeId: s.userId, dueDate: '2020-01-01' } })).body.data.task.id;
    await call(t.app, 'POST', '/tasks', { auth: a.auth, body: { title: 'Someone else\'s', assigneeId: a.userId } });
    const page = await get(t.app, '/admin/data/tasks', s.cookie);
    expect(page.status).toBe(200);
    expect(page.body).toContain('Mine, overdue');
    expect(page.body).toContain('Overdue');
    expect(page.body).not.toContain('Someone else');
    const done = await submit(t.app, s, `/admin/data/tasks/${mine}/done`, {});
    expect(done.status).toBe(303);
    expect((await get(t.app, done.location!, s.cookie)).body).toContain('No open tasks assigned to you.');
    const events = await listEvents(t.ctx.database.db, a.orgId, { objectId: mine });
    expect(events.map((e) => [e.type, e.data.actor])).toEqual([
      ['task.created', expect.anything()],
      ['task.completed', { type: 'USER', id: s.userId, channel: 'UI' }],
    ]);
  });

  it('names the item each task is on, with a link to its page', async () => {
    const lead = (await call(t.app, 'POST', '/leads', { auth: a.auth, body: { name: 'Grace Hopper' } })).body.data.lead.id;
    const deal = (await call(t.app, 'POST', '/deals', { auth: a.auth, body: { name: 'Compiler deal' } })).body.data.deal.id;
    await call(t.app, 'POST', '/objects', { auth: a.auth, body: { slug: 'calls', name: 'Calls', fields: [{ key: 'subject', label: 'Subject', type: 'text' }] } });
    const record = (await call(t.app, 'POST', '/objects/calls/records', { auth: a.auth, body: { subject: 'Kick-off call' } })).body.data.record.id;
    for (const target of [{ object: 'lead', id: lead }, { object: 'deal', id: deal }, { object: 'record', id: record, objectSlug: 'calls' }]) {
      expect((await call(t.app, 'POST', '/tasks', { auth: a.auth, body: { title: `About ${target.object}`, target, assigneeId: s.userId } })).status).toBe(201);
    }
    const page = await get(t.app, '/admin/data/tasks', s.cookie);
    expect(page.body).toContain(`<a href="/admin/data/leads/${lead}">Grace Hopper</a>`);
    expect(page.body).toContain(`<a href="/admin/data/deals/${deal}">Compiler deal</a>`);
    expect(page.body).toContain(`<a href="/admin/data/objects/calls/${record}">Kick-off call</a>`);
  });
});
