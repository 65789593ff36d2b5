import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { createApiKey } from '../../src/modules/orgs/orgs.service.js';
import { deactivateUser } from '../../src/admin/auth/activation.service.js';
import type { TestApp } from '../helpers/test-app.js';
import { addUser, seedOrg, type Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';
import { addConsoleUser, fieldError, get, openConsole, signIn, submit, type ConsoleSession } from '../helpers/admin.js';

let t: TestApp;
let a: Seeded;
let admin: ConsoleSession;
const clock = new ManualClock('2026-03-02T09:00:00.000Z');

beforeAll(async () => {
  ({ t, a, s: admin } = await openConsole({ admin: true, name: 'Ada Admin' }, { app: { clock }, timezone: 'Europe/Paris' }));
});
afterAll(() => t?.close());

describe('API keys', () => {
  it('creates a key shown exactly once, which works until revoked', async () => {
    const res = await submit(t.app, admin, '/admin/config/api-keys', { name: 'Zapier', scopes: ['leads:read', 'deals:read'], expiresOn: '2026-12-31' });
    expect(res.status).toBe(201);
    const key = /id="secret-value" class="code" type="text" readonly value="(crm_live_[A-Za-z0-9_-]+)"/.exec(res.body)![1]!;
    expect(res.headers['cache-control']).toBe('no-store');
    const me = await call(t.app, 'GET', '/me', { auth: { authorization: `Bearer ${key}` } });
    expect(me.status).toBe(200);
    expect(me.body.data.me.key).toMatchObject({ name: 'Zapier', scopes: ['leads:read', 'deals:read'], expiresAt: '2026-12-31T23:00:00.000Z' });
    expect(me.body.data.me.user).toMatchObject({ id: admin.userId, name: 'Ada Admin' });
    const list = await get(t.app, '/admin/config/api-keys', admin.cookie);
    expect(list.body).not.toContain(key);
    expect(list.body).toContain(`${key.slice(0, 17)}…`);
    const revoke = await submit(t.app, admin, `/admin/config/api-keys/${me.body.data.me.key.id}/revoke`);
    expect(revoke.status).toBe(303);
    expect((await get(t.app, revoke.location!, admin.cookie)).body).toContain('The key was revoked.');
    expect((await call(t.app, 'GET', '/me', { auth: { authorization: `Bearer ${key}` } })).status).toBe(401);
  });

  it("marks the keys of a deactivated user, which answer 401, as not active", async () => {
    const rep = await addUser(t.ctx, a.orgId, 'Rita Rep');
    const { key } = await createApiKey(t.ctx, { organizationId: a.orgId, userId: rep, scopes: ['leads:read'], name: 'Rita script' });
    const row = async () => /<tr>\s*<td>Rita script[\s\S]*?<\/tr>/.exec((await get(t.app, '/admin/config/api-keys', admin.cookie)).body)![0];
    expect(await row()).toContain('Active');
    await deactivateUser(t.ctx, a.orgId, rep, admin.userId);
    expect((await call(t.app, 'GET', '/me', { auth: { authorization: `Bearer ${key}` } })).status).toBe(401);
    expect(await row()).toContain('Owner deactivated');
    expect(await row()).not.toContain('>Active<');
  });

  it('shows the validation problems in place', async () => {
    const none = await submit(t.app, admin, '/admin/config/api-keys', { name: 'No scopes' });
    expect(none.status).toBe(400);
    expect(fieldError(none.body, 'scopes')).toBe('Error: Scopes at least one scope is required');
    expect(none.body).toContain('value="No scopes"');
    const past = await submit(t.app, admin, '/admin/config/api-keys', { name: 'Old', scopes: 'leads:read', expiresOn: '2026-03-01' });
    expect(fieldError(past.body, 'expiresOn')).toBe('Error: Expires on must be in the future');
    expect(past.body).toMatch(/value="leads:read" checked/);
    const garbled = await submit(t.app, admin, '/admin/config/api-keys', { name: 'Bad', scopes: 'leads:read', expiresOn: '31/12/2026' });
    expect(fieldError(garbled.body, 'expiresOn')).toContain('must be a date');
    const forged = await submit(t.app, admin, '/admin/config/api-keys', { name: 'Forged', scopes: 'root:all' });
    expect(fieldError(forged.body, 'scopes')).toContain('unknown scopes: root:all');
  });
});

describe('organization settings', () => {
  it('changes name and time zone, refusing an unknown zone in place', async () => {
    const page = await get(t.app, '/admin/config/settings', admin.cookie);
    expect(page.body).toContain('<option value="America/New_York"></option>');
    expect(page.body).toContain('list="time-zones"');
    const bad = await submit(t.app, admin, '/admin/config/settings', { name: ' ', timezone: 'Mars/Olympus' });
    expect(bad.status).toBe(400);
    expect(fieldError(bad.body, 'name')).toBe('Error: Organization name is required');
    expect(fieldError(bad.body, 'timezone')).toContain('must be an IANA time zone');
    expect(bad.body).toContain('value="Mars/Olympus"');
    const ok = await submit(t.app, admin, '/admin/config/settings', { name: 'Renamed Org', timezone: 'Asia/Tokyo' });
    expect(ok.status).toBe(303);
    const me = await call(t.app, 'GET', '/me', { auth: a.auth });
    expect(me.body.data.me.organization).toMatchObject({ name: 'Renamed Org', timezone: 'Asia/Tokyo' });
    expect((await get(t.app, ok.location!, admin.cookie)).body).toContain('Settings saved.');
  });
});

describe('assignment rules', () => {
  it('saves rules validated by setAssignmentRules, and new leads follow them', async () => {
    const rep = await addUser(t.ctx, a.orgId, 'Rita Rep');
    const invalidJson = await submit(t.app, admin, '/admin/config/assignment-rules', { rules: '{"rules": [' });
    expect(invalidJson.status).toBe(400);
    expect(fieldError(invalidJson.body, 'rules')).toContain('is not valid JSON');
    const stranger = await seedOrg(t.ctx);
    const wrong = await submit(t.app, admin, '/admin/config/assignment-rules', {
      rules: JSON.stringify({ rules: [{ id: 'x', match: { source: 'TV' }, assign: { type: 'user', userId: stranger.userId } }] }),
    });
    expect(fieldError(wrong.body, 'rules')).toContain('rule 1 (match.source): must be one of');
    const wrongUser = await submit(t.app, admin, '/admin/config/assignment-rules', {
      rules: JSON.stringify({ rules: [{ id: 'x', match: {}, assign: { type: 'user', userId: stranger.userId } }] }),
    });
    expect(fieldError(wrongUser.body, 'rules')).toContain(`rule 1 (assign): user ${stranger.userId} is not in this organization`);
    const ok = await submit(t.app, admin, '/admin/config/assignment-rules', { rules: JSON.stringify({ rules: [{ id: 'web', match: { source: 'WEBSITE' }, assign: { type: 'user', userId: rep } }] }) });
    expect(ok.status).toBe(303);
    expect((await get(t.app, ok.location!, admin.cookie)).body).toContain('When source is WEBSITE: assign to Rita Rep');
    const lead = await call(t.app, 'POST', '/leads', { auth: a.auth, body: { name: 'Routed', source: 'WEBSITE' } });
    expect(lead.body.data.lead.ownerId).toBe(rep);
  });
});

describe('users', () => {
  it('adds users with the API\'s validation messages, grants and withdraws the admin role', async () => {
    const bad = await submit(t.app, admin, '/admin/config/users', { name: '', email: 'nope', password: 'short' });
    expect(bad.status).toBe(400);
    expect(fieldError(bad.body, 'name')).toBe('Error: Name is required');
    expect(fieldError(bad.body, 'email')).toBe('Error: E-mail must be a valid e-mail address');
    expect(fieldError(bad.body, 'password')).toBe('Error: Password must be at least 10 characters');
    const ok = await submit(t.app, admin, '/admin/config/users', { name: 'Bob Member', email: 'bob@member.example', password: 'bobs password 1' });
    expect(ok.status).toBe(303);
    const dup = await submit(t.app, admin, '/admin/config/users', { name: 'Bob Again', email: 'BOB@member.example' });
    expect(fieldError(dup.body, 'email')).toBe('Error: E-mail is already used by another user');
    const page = (await get(t.app, '/admin/config/users', admin.cookie)).body;
    expect(page).toContain('bob@member.example');
    const bobId = /\/admin\/config\/users\/([0-9a-f]{24})\/make-admin" class="inline-form"><input type="hidden" name="_csrf" value="[^"]+"><button type="submit" class="button button--secondary" aria-label="Make Bob Member an administrator"/.exec(page)![1]!;
    const bob = await signIn(t.app, { id: bobId, email: 'bob@member.example', password: 'bobs password 1' });
    expect((await submit(t.app, bob, '/admin/config/settings', { name: 'By Bob', timezone: 'UTC' })).status).toBe(403);
    expect((await submit(t.app, admin, `/admin/config/users/${bobId}/make-admin`)).status).toBe(303);
    expect((await submit(t.app, bob, '/admin/config/settings', { name: 'By Bob', timezone: 'UTC' })).status).toBe(303);
    expect((await submit(t.app, admin, `/admin/config/users/${bobId}/remove-admin`)).status).toBe(303);
    expect((await submit(t.app, bob, '/admin/config/settings', { name: 'By Bob again', timezone: 'UTC' })).status).toBe(403);
    expect((await submit(t.app, admin, `/admin/config/users/${admin.userId}/remove-admin`)).status).toBe(409);
  });

  it('revokes all console sessions of a user', async () => {
    const carol = await addConsoleUser(t.ctx, a.orgId, { name: 'Carol' });
    const one = await signIn(t.app, carol);
    const two = await signIn(t.app, carol);
    const page = (await get(t.app, '/admin/config/users', admin.cookie)).body;
    expect(page).toContain(`/admin/config/users/${carol.id}/revoke-sessions`);
    expect((await submit(t.app, admin, `/admin/config/users/${carol.id}/revoke-sessions`)).status).toBe(303);
    expect((await get(t.app, '/admin', one.cookie)).status).toBe(303);
    expect((await get(t.app, '/admin', two.cookie)).status).toBe(303);
    expect((await get(t.app, '/admin', admin.cookie)).status).toBe(200);
  });
});
