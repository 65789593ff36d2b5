import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/test-app.js';
import type { Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';
import { eventually } from '../helpers/receiver.js';
import { addConsoleUser, get, openConsole, post, signIn, submit, type ConsoleSession } from '../helpers/admin.js';

/** The console's Delete button, Trash pages, Restore and Delete for good, for every trashable resource. */
let t: TestApp;
let a: Seeded;
/** A member; `admin` an administrator of the same organization. */
let s: ConsoleSession;
let admin: ConsoleSession;

beforeAll(async () => {
  ({ t, a, s } = await openConsole({ name: 'Tess Trash' }));
  admin = await signIn(t.app, await addConsoleUser(t.ctx, a.orgId, { admin: true, name: 'Ada Admin' }));
  await call(t.app, 'POST', '/objects', { auth: a.auth, body: { slug: 'gizmos', name: 'Gizmos', fields: [{ key: 'title', label: 'Title', type: 'text' }] } });
});
afterAll(() => t?.close());

/** Every console resource with a Trash page: its API path, its key in answers, its console list, a body named `name`. */
const resources = (name: string) => [
  { api: '/leads', key: 'lead', page: '/admin/data/leads', body: { name } },
  { api: '/accounts', key: 'account', page: '/admin/data/accounts', body: { name } },
  { api: '/deals', key: 'deal', page: '/admin/data/deals', body: { name } },
  { api: '/objects/gizmos/records', key: 'record', page: '/admin/data/objects/gizmos', body: { title: name } },
];

describe.each(resources('Console Capybara'))('console trash of $key', ({ api, key, page, body }) => {
  it('the record page deletes with a confirmation; the item leaves the list, shows in the Trash page, and Restore brings it back', async () => {
    const id = (await call(t.app, 'POST', api, { auth: a.auth, body })).body.data[key].id as string;
    const detail = await get(t.app, `${page}/${id}`, s.cookie);
    expect(detail.body).toMatch(new RegExp(`action="${page}/${id}/delete"[^>]*data-confirm="Move Console Capybara to the trash`));
    // In the row of the page's actions, after Edit, not alone above them.
    expect(detail.body).toMatch(new RegExp(`<div class="button-row"><a class="button button--primary" href="${page}/${id}/edit">[^<]+</a>[^]*?action="${page}/${id}/delete"[^]*?</div>`));
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

describe.each(resources('Grace Hopper'))('console delete for good of $key', ({ api, key, page, body }) => {
  const trashed = async () => {
    const id = (await call(t.app, 'POST', api, { auth: a.auth, body })).body.data[key].id as string;
    expect((await call(t.app, 'DELETE', `${api}/${id}`, { auth: a.auth })).status).toBe(200);
    return id;
  };
  const inTrash = async (id: string) => (await call(t.app, 'GET', `${api}?deleted=true&limit=100`, { auth: a.auth })).body.data[`${key}s`].some((x: { id: string }) => x.id === id);

  it('an administrator deletes a trashed item for good from its Trash page, as the API permanent delete does', async () => {
    const id = await trashed();
    const before = await get(t.app, `${page}/trash`, admin.cookie);
    expect(before.body).toMatch(
      new RegExp(`action="${page}/${id}/purge" class="inline-form" data-confirm="Delete Grace Hopper for good\\? This cannot be undone\\.">.*<button type="submit" class="button button--danger" aria-label="Delete Grace Hopper for good">Delete for good</button>`),
    );

    const purged = await submit(t.app, admin, `${page}/${id}/purge`);
    expect(purged.status, purged.body).toBe(303);
    expect(purged.location).toBe(`${page}/trash?notice=purged`);
    const after = await get(t.app, purged.location!, admin.cookie);
    expect(after.body).toContain('Deleted for good.');
    expect(after.body).not.toContain(`${page}/${id}/`);
    expect((await call(t.app, 'GET', `${api}/${id}`, { auth: a.auth })).status).toBe(404);
    expect(await inTrash(id)).toBe(false);
    await eventually(async () => {
      const events = (await call(t.app, 'GET', `/events?types=${key}.purged&limit=1000`, { auth: a.auth })).body.data.events.filter((e: { data: { id: string } }) => e.data.id === id);
      expect(events.map((e: { data: { actor: unknown } }) => e.data.actor)).toEqual([{ type: 'USER', id: admin.userId, channel: 'UI' }]);
    });

    expect((await submit(t.app, admin, `${page}/${id}/purge`)).status).toBe(404);
  });

  it('a member sees no Delete for good button and is refused, the item staying in the trash', async () => {
    const id = await trashed();
    const trashPage = await get(t.app, `${page}/trash`, s.cookie);
    expect(trashPage.body).toContain(`action="${page}/${id}/restore"`);
    expect(trashPage.body).not.toContain('/purge"');
    expect(trashPage.body).not.toContain('Delete for good');
    const refused = await submit(t.app, s, `${page}/${id}/purge`);
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('Administrators only');
    expect(await inTrash(id)).toBe(true);
  });

  it('a live item is not found from this route and stays; the form needs the session CSRF token', async () => {
    const live = (await call(t.app, 'POST', api, { auth: a.auth, body })).body.data[key].id as string;
    expect((await submit(t.app, admin, `${page}/${live}/purge`)).status).toBe(404);
    expect((await call(t.app, 'GET', `${api}/${live}`, { auth: a.auth })).status).toBe(200);

    const id = await trashed();
    for (const csrf of [null, s.csrf]) {
      const refused = await post(t.app, `${page}/${id}/purge`, {}, { cookie: admin.cookie, csrf });
      expect(refused.status).toBe(403);
      expect(refused.body).toContain('Form expired');
    }
    expect(await inTrash(id)).toBe(true);
  });
});

describe.each([
  { api: '/notes', key: 'note', page: '/admin/data/notes', body: { body: 'Meant for another lead: Bob +44 20 7946 0000' }, shown: 'Meant for another lead', crumbs: ['Data', 'Notes', 'Notes: trash'] },
  { api: '/tasks', key: 'task', page: '/admin/data/tasks', body: { title: 'Call Bob by mistake' }, shown: 'Call Bob by mistake', crumbs: ['Data', 'Tasks', 'Tasks: trash'] },
])('console trash of a $key on an item\'s timeline', ({ api, key, page, body, shown, crumbs }) => {
  it('the timeline deletes it with a confirmation; its Trash page lists it with Restore, and an administrator deletes it for good', async () => {
    const lead = (await call(t.app, 'POST', '/leads', { auth: a.auth, body: { name: `Timeline ${key}` } })).body.data.lead.id as string;
    const id = (await call(t.app, 'POST', api, { auth: a.auth, body: { ...body, target: { object: 'lead', id: lead } } })).body.data[key].id as string;
    const leadPage = `/admin/data/leads/${lead}`;
    const detail = await get(t.app, leadPage, s.cookie);
    expect(detail.body).toMatch(new RegExp(`action="${page}/${id}/delete"[^>]*data-confirm="Move the ${key} &quot;${shown}`));
    expect(detail.body).toContain(`href="${page}/trash"`);

    const deleted = await submit(t.app, s, `${page}/${id}/delete`);
    expect(deleted.status, deleted.body).toBe(303);
    expect(deleted.location).toBe(`${page}/trash?notice=deleted`);
    expect((await get(t.app, leadPage, s.cookie)).body).not.toContain(shown);
    expect((await call(t.app, 'GET', `${api}/${id}`, { auth: a.auth })).status).toBe(404);
    const trash = await get(t.app, deleted.location!, s.cookie);
    expect(trash.body).toContain('Moved to the trash.');
    const breadcrumb = /<nav class="crumbs" aria-label="Breadcrumb"><ol>(.*?)<\/ol><\/nav>/s.exec(trash.body)![1]!;
    expect([...breadcrumb.matchAll(/<li[^>]*>(.*?)<\/li>/gs)].map((m) => m[1]!.replace(/<[^>]+>/g, ''))).toEqual(crumbs);
    expect(trash.body).toContain(shown);
    expect(trash.body).toContain(`action="${page}/${id}/restore"`);
    expect(trash.body).not.toContain(`action="${page}/${id}/purge"`);

    expect((await submit(t.app, s, `${page}/${id}/restore`)).status).toBe(303);
    expect((await get(t.app, leadPage, s.cookie)).body).toContain(shown);

    expect((await submit(t.app, s, `${page}/${id}/delete`)).status).toBe(303);
    expect((await submit(t.app, s, `${page}/${id}/purge`)).status).toBe(403);
    const purged = await submit(t.app, admin, `${page}/${id}/purge`);
    expect(purged.status, purged.body).toBe(303);
    expect((await get(t.app, `${page}/trash`, admin.cookie)).body).not.toContain(shown);
    expect((await call(t.app, 'GET', `${api}?deleted=true&limit=100`, { auth: a.auth })).body.data[`${key}s`].map((x: { id: string }) => x.id)).not.toContain(id);
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
