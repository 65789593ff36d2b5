import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';
import { addConsoleUser, attemptSignIn, get, post, signIn, submit, type ConsoleSession } from '../helpers/admin.js';

let t: TestApp;
let a: Seeded;
let admin: ConsoleSession;

beforeAll(async () => {
  t = await buildTestApp();
  a = await seedOrg(t.ctx);
  admin = await signIn(t.app, await addConsoleUser(t.ctx, a.orgId, { admin: true, name: 'Ada Admin' }));
});
afterAll(() => t.close());

describe('console: deactivating users', () => {
  it('an administrator deactivates a user behind a confirmation (signed out, no sign-in, marked on what they own) and reactivates them', async () => {
    const bob = await addConsoleUser(t.ctx, a.orgId, { name: 'Bob Member' });
    const bobSession = await signIn(t.app, bob);
    const lead = (await call(t.app, 'POST', '/leads', { auth: a.auth, body: { name: 'Bob\'s lead', ownerId: bob.id } })).body.data.lead.id;
    const page = (await get(t.app, '/admin/config/users', admin.cookie)).body;
    expect(page).toContain(`action="/admin/config/users/${bob.id}/deactivate"`);
    expect(page).toMatch(/data-confirm="Deactivate Bob Member\?/);
    expect(page).not.toContain(`/admin/config/users/${admin.userId}/deactivate`);

    expect((await post(t.app, `/admin/config/users/${bob.id}/deactivate`, {}, { cookie: admin.cookie })).status).toBe(403);
    const done = await submit(t.app, admin, `/admin/config/users/${bob.id}/deactivate`);
    expect(done.status).toBe(303);
    const after = (await get(t.app, done.location!, admin.cookie)).body;
    expect(after).toContain('User deactivated');
    expect(after).toContain('Deactivated');
    expect(after).toContain(`action="/admin/config/users/${bob.id}/reactivate"`);
    expect((await get(t.app, '/admin', bobSession.cookie)).status).not.toBe(200);
    expect((await attemptSignIn(t.app, bob.email, bob.password)).status).toBe(401);
    expect((await get(t.app, `/admin/data/leads/${lead}`, admin.cookie)).body).toContain('Bob Member (deactivated)');

    expect((await submit(t.app, admin, `/admin/config/users/${bob.id}/reactivate`)).status).toBe(303);
    expect((await attemptSignIn(t.app, bob.email, bob.password)).status).toBe(303);
  });

  it('refuses deactivating yourself, saying why; members may not deactivate; another organization\'s user is not found', async () => {
    const self = await submit(t.app, admin, `/admin/config/users/${admin.userId}/deactivate`);
    expect(self.status).toBe(409);
    expect(self.body).toContain('You cannot deactivate yourself');

    const member = await signIn(t.app, await addConsoleUser(t.ctx, a.orgId));
    const target = await addConsoleUser(t.ctx, a.orgId);
    expect((await get(t.app, '/admin/config/users', member.cookie)).body).not.toContain('/deactivate"');
    expect((await submit(t.app, member, `/admin/config/users/${target.id}/deactivate`)).status).toBe(403);
    const elsewhere = await addConsoleUser(t.ctx, (await seedOrg(t.ctx)).orgId);
    expect((await submit(t.app, admin, `/admin/config/users/${elsewhere.id}/deactivate`)).status).toBe(404);
    expect((await submit(t.app, admin, `/admin/config/users/${elsewhere.id}/reactivate`)).status).toBe(404);
  });
});
