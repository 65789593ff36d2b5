import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';
import { addConsoleUser, get, signIn, submit, type ConsoleSession } from '../helpers/admin.js';

let t: TestApp;
let a: Seeded;
let b: Seeded;
let admin: ConsoleSession;
let member: ConsoleSession;
let otherAdmin: ConsoleSession;
let leadOfB: string;
let userOfB: string;

const PAGES = ['/admin', '/admin/data/leads', '/admin/data/leads/new', '/admin/config/api-keys', '/admin/config/assignment-rules', '/admin/config/settings', '/admin/config/users', '/admin/account', '/admin/account/sessions'];

beforeAll(async () => {
  t = await buildTestApp();
  [a, b] = [await seedOrg(t.ctx), await seedOrg(t.ctx)];
  admin = await signIn(t.app, await addConsoleUser(t.ctx, a.orgId, { admin: true }));
  member = await signIn(t.app, await addConsoleUser(t.ctx, a.orgId));
  const bUser = await addConsoleUser(t.ctx, b.orgId, { admin: true });
  userOfB = bUser.id;
  otherAdmin = await signIn(t.app, bUser);
  leadOfB = (await call(t.app, 'POST', '/leads', { auth: b.auth, body: { name: 'Secret of B' } })).body.data.lead.id;
});
afterAll(() => t?.close());

/** Every configuration change the console offers, with a body that would succeed for an administrator. */
const configPosts = () => [
  ['/admin/config/api-keys', { name: 'k', scopes: 'leads:read' }],
  [`/admin/config/api-keys/${a.keyId}/revoke`, {}],
  ['/admin/config/assignment-rules', { rules: '{"rules": []}' }],
  ['/admin/config/settings', { name: 'Renamed', timezone: 'UTC' }],
  ['/admin/config/users', { name: 'New', email: 'new.member@example.com' }],
  [`/admin/config/users/${member.userId}/make-admin`, {}],
  [`/admin/config/users/${admin.userId}/remove-admin`, {}],
  [`/admin/config/users/${admin.userId}/revoke-sessions`, {}],
  [`/admin/config/users/${admin.userId}/password`, { newPassword: 'set by a member', confirmPassword: 'set by a member' }],
  [`/admin/config/users/${admin.userId}/remove-access`, {}],
] as const;

describe('access', () => {
  it('requires sign-in for every page', async () => {
    for (const page of PAGES) {
      const res = await get(t.app, page);
      expect(res.status, page).toBe(303);
      expect(res.location).toMatch(/^\/admin\/sign-in/);
    }
  });

  it('lets members browse every page but shows them no configuration controls', async () => {
    for (const page of PAGES) expect((await get(t.app, page, member.cookie)).status, page).toBe(200);
    const keys = await get(t.app, '/admin/config/api-keys', member.cookie);
    expect(keys.body).not.toContain('Create key');
    expect(keys.body).not.toContain('/revoke');
    expect(keys.body).toContain('Only administrators can create or revoke keys.');
    expect((await get(t.app, '/admin/config/settings', member.cookie)).body).not.toContain('Save settings');
    expect((await get(t.app, '/admin/config/assignment-rules', member.cookie)).body).not.toContain('Save rules');
    const users = await get(t.app, '/admin/config/users', member.cookie);
    expect(users.body).not.toContain('Add user');
    expect(users.body).not.toContain('make-admin');
  });

  it('refuses every configuration change from a member with 403, changing nothing', async () => {
    for (const [url, fields] of configPosts()) {
      const res = await submit(t.app, member, url, fields);
      expect(res.status, url).toBe(403);
      expect(res.body).toContain('Administrators only');
    }
    expect((await call(t.app, 'GET', '/me', { auth: a.auth })).status).toBe(200);
    expect((await get(t.app, '/admin/config/settings', admin.cookie)).body).not.toContain('Renamed');
    expect((await get(t.app, '/admin', admin.cookie)).status).toBe(200);
  });

  it('lets members create and edit leads', async () => {
    const created = await submit(t.app, member, '/admin/data/leads', { name: 'By a member', status: 'NEW' });
    expect(created.status).toBe(303);
    const id = /\/admin\/data\/leads\/([0-9a-f]{24})/.exec(created.location!)![1]!;
    expect((await submit(t.app, member, `/admin/data/leads/${id}`, { name: 'Edited by a member', status: 'CONTACTED' })).status).toBe(303);
  });
});

describe('organizations are isolated', () => {
  it('answers 404 for another organization\'s lead, read or written', async () => {
    expect((await get(t.app, `/admin/data/leads/${leadOfB}`, admin.cookie)).status).toBe(404);
    expect((await get(t.app, `/admin/data/leads/${leadOfB}/edit`, admin.cookie)).status).toBe(404);
    const write = await submit(t.app, admin, `/admin/data/leads/${leadOfB}`, { name: 'Taken over', status: 'NEW' });
    expect(write.status).toBe(404);
    expect(write.body).not.toContain('Secret of B');
    expect((await call(t.app, 'GET', `/leads/${leadOfB}`, { auth: b.auth })).body.data.lead.name).toBe('Secret of B');
  });

  it('answers 404 for another organization\'s key and users', async () => {
    expect((await submit(t.app, admin, `/admin/config/api-keys/${b.keyId}/revoke`)).status).toBe(404);
    expect((await call(t.app, 'GET', '/me', { auth: b.auth })).status).toBe(200);
    expect((await submit(t.app, admin, `/admin/config/users/${userOfB}/make-admin`)).status).toBe(404);
    expect((await submit(t.app, admin, `/admin/config/users/${userOfB}/revoke-sessions`)).status).toBe(404);
    expect((await submit(t.app, admin, `/admin/config/users/${userOfB}/password`, { newPassword: 'taken over password', confirmPassword: 'taken over password' })).status).toBe(404);
    expect((await submit(t.app, admin, `/admin/config/users/${userOfB}/remove-access`)).status).toBe(404);
    expect((await get(t.app, '/admin', otherAdmin.cookie)).status).toBe(200);
  });

  it('shows each organization only its own data', async () => {
    const leads = await get(t.app, '/admin/data/leads', admin.cookie);
    expect(leads.body).not.toContain('Secret of B');
    const keys = await get(t.app, '/admin/config/api-keys', admin.cookie);
    expect(keys.body).not.toContain(b.keyId);
    const users = await get(t.app, '/admin/config/users', admin.cookie);
    expect(users.body).not.toContain(userOfB);
  });
});

describe('error pages', () => {
  it('renders unknown console pages and failures as HTML without internals', async () => {
    const missing = await get(t.app, '/admin/nowhere', admin.cookie);
    expect(missing.status).toBe(404);
    expect(missing.headers['content-type']).toMatch(/text\/html/);
    const broken = await t.app.inject({ method: 'POST', url: '/admin/data/leads', headers: { cookie: admin.cookie, 'content-type': 'application/x-www-form-urlencoded' }, payload: '_csrf=' + admin.csrf + '&name=%E0%A4%A' });
    expect(broken.statusCode).toBeLessThan(500);
    expect(broken.body).not.toMatch(/at .*\.ts:\d+/);
  });

  it('keeps the console out of the OpenAPI document and the API\'s JSON errors unchanged', async () => {
    const doc = await call(t.app, 'GET', '/openapi.json');
    expect(Object.keys(doc.body.paths).some((p) => p.startsWith('/admin'))).toBe(false);
    const form = await t.app.inject({ method: 'POST', url: '/api/public/v1/leads', headers: { ...a.auth, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'name=x' });
    expect(form.statusCode).toBe(415);
    expect(JSON.parse(form.body).code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });
});
