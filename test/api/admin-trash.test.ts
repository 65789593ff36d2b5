import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/test-app.js';
import type { Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';
import { get, openConsole, submit, type ConsoleSession } from '../helpers/admin.js';

/** The console's Delete button, Trash pages and Restore, for every trashable resource. */
let t: TestApp;
let a: Seeded;
let s: ConsoleSession;

beforeAll(async () => {
  ({ t, a, s } = await openConsole({ name: 'Tess Trash' }));
  await call(t.app, 'POST', '/objects', { auth: a.auth, body: { slug: 'gizmos', name: 'Gizmos', fields: [{ key: 'title', label: 'Title', type: 'text' }] } });
});
afterAll(() => t?.close());

describe.each([
  { api: '/leads', key: 'lead', page: '/admin/data/leads', body: { name: 'Console Capybara' } },
  { api: '/accounts', key: 'account', page: '/admin/data/accounts', body: { name: 'Console Capybara' } },
  { api: '/deals', key: 'deal', page: '/admin/data/deals', body: { name: 'Console Capybara' } },
  { api: '/objects/gizmos/records', key: 'record', page: '/admin/data/objects/gizmos', body: { title: 'Console Capybara' } },
])('console trash of $key', ({ api, key, page, body }) => {
  it('the record page deletes with a confirmation; the item leaves the list, shows in the Trash page, and Restore brings it back', async () => {
    const id = (await call(t.app, 'POST', api, { auth: a.auth, body })).body.data[key].id as string;
    const detail = await get(t.app, `${page}/${id}`, s.cookie);
    expect(detail.body).toMatch(new RegExp(`action="${page}/${id}/delete"[^>]*data-confirm="Move Console Capybara to the trash`));
    expect((await get(t.app, page, s.cookie)).body).toContain(`${page}/${id}`);

    const deleted = await submit(t.app, s, `${page}/${id}/delete`);
    expect(deleted.status).toBe(303);
    expect(deleted.location).toBe(`${page}/trash?notice=deleted`);
    expect((await get(t.app, page, s.cookie)).body).not.toContain(`${page}/${id}`);
    expect((await get(t.app, `${page}/${id}`, s.cookie)).status).toBe(404);
    const trash = await get(t.app, `${page}/trash?notice=deleted`, s.cookie);
    expect(trash.body).toContain('Moved to the trash.');
    expect(trash.body).toContain('Console Capybara');
    expect(trash.body).toContain(`action="${page}/${id}/restore"`);
    expect((await call(t.app, 'GET', `${api}/${id}`, { auth: a.auth })).status).toBe(404);

    const restored = await submit(t.app, s, `${page}/${id}/restore`);
    expect(restored.status).toBe(303);
    expect((await get(t.app, `${page}/trash`, s.cookie)).body).not.toContain(`${page}/${id}/restore`);
    expect((await get(t.app, page, s.cookie)).body).toContain(`${page}/${id}`);
  });
});

describe('console views built on stores', () => {
  it('the deals board and the dashboard leave trashed deals and leads out', async () => {
    const deal = (await call(t.app, 'POST', '/deals', { auth: a.auth, body: { name: 'Board Wombat' } })).body.data.deal.id as string;
    expect((await get(t.app, '/admin/data/deals/board', s.cookie)).body).toContain('Board Wombat');
    await call(t.app, 'DELETE', `/deals/${deal}`, { auth: a.auth });
    expect((await get(t.app, '/admin/data/deals/board', s.cookie)).body).not.toContain('Board Wombat');
    const leadCount = async () => Number(/<span class="stat-value">([\d,]+)<\/span> <span class="stat-label">Leads/.exec((await get(t.app, '/admin', s.cookie)).body)![1]!.replace(/,/g, ''));
    const before = await leadCount();
    const lead = (await call(t.app, 'POST', '/leads', { auth: a.auth, body: { name: 'Dashboard Quoll' } })).body.data.lead.id as string;
    expect(await leadCount()).toBe(before + 1);
    expect((await get(t.app, '/admin', s.cookie)).body).toContain(`/admin/data/leads/${lead}">Dashboard Quoll`);
    await call(t.app, 'DELETE', `/leads/${lead}`, { auth: a.auth });
    expect(await leadCount()).toBe(before);
    expect((await get(t.app, '/admin', s.cookie)).body).not.toContain(`/admin/data/leads/${lead}">Dashboard Quoll`);
  });
});
