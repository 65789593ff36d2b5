import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { createUser } from '../../src/modules/orgs/orgs.service.js';
import { buildAppWithSharedSchemas, buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { addConsoleUser, attemptSignIn, fieldError, get, post, signIn, submit, type ConsoleSession } from '../helpers/admin.js';

let t: TestApp;
let app: FastifyInstance;
let a: Seeded;
let admin: ConsoleSession;
const clock = new ManualClock('2026-03-02T09:00:00.000Z');
const logLines: string[] = [];
/** Every password typed in this file: none may reach a log line or come back in a page. */
const typed = new Set<string>();

const pw = (s: string) => (typed.add(s), s);
const change = (s: ConsoleSession, currentPassword: string, newPassword: string, confirmPassword = newPassword) =>
  submit(app, s, '/admin/account/password', { currentPassword: pw(currentPassword), newPassword: pw(newPassword), confirmPassword: pw(confirmPassword) });
const reset = (s: ConsoleSession, userId: string, newPassword: string, confirmPassword = newPassword) =>
  submit(app, s, `/admin/config/users/${userId}/password`, { newPassword: pw(newPassword), confirmPassword: pw(confirmPassword) });
const setCookie = (res: { headers: Record<string, unknown> }) =>
  ([] as string[]).concat((res.headers['set-cookie'] as string[] | undefined) ?? []).find((c) => c.startsWith('crm_session='))?.split(';')[0];
const signedIn = async (cookie: string) => (await get(app, '/admin', cookie)).status === 200;
const passwordHash = async (userId: string) =>
  (await t.ctx.database.db.selectFrom('users').select('password_hash').where('id', '=', userId).executeTakeFirstOrThrow()).password_hash;

beforeAll(async () => {
  t = await buildTestApp({ clock, env: { LOG_LEVEL: 'debug' } });
  app = await buildAppWithSharedSchemas(t.ctx, { logger: { stream: new Writable({ write: (chunk, _enc, cb) => (logLines.push(chunk.toString()), cb()) }) } });
  await app.ready();
  a = await seedOrg(t.ctx);
  admin = await signIn(app, await addConsoleUser(t.ctx, a.orgId, { admin: true }));
});
afterAll(async () => {
  await app?.close();
  await t?.close();
});

describe('changing your own password', () => {
  it('needs the current password, keeps this session under a new cookie and signs out the others', async () => {
    const user = await addConsoleUser(t.ctx, a.orgId);
    const here = await signIn(app, user);
    const elsewhere = await signIn(app, user);
    const page = await get(app, '/admin/account', here.cookie);
    expect(page.body).toContain('<h2 id="change-password">Change password</h2>');
    expect(page.body).toContain('autocomplete="current-password"');

    const res = await change(here, user.password, 'my brand new password');
    expect(res.status).toBe(303);
    expect(res.location).toBe('/admin/account?notice=password-changed');
    const renewed = setCookie(res)!;
    expect(renewed).toBeDefined();
    expect(renewed).not.toBe(here.cookie);
    const after = await get(app, '/admin/account?notice=password-changed', renewed);
    expect(after.body).toContain('Your password was changed. Your other sessions were signed out.');
    expect(after.body).toContain('signed in to the console in 1 place');
    // The old cookie of this session (a copy someone may hold) and every other session are out.
    expect(await signedIn(here.cookie)).toBe(false);
    expect(await signedIn(elsewhere.cookie)).toBe(false);
    expect((await attemptSignIn(app, user.email, user.password)).status).toBe(401);
    expect((await attemptSignIn(app, user.email, 'my brand new password')).status).toBe(303);
    // Stored at the production cost (test users start with a cheaper hash: helpers/password-hash.ts).
    expect(await passwordHash(user.id)).toMatch(/^scrypt\$32768\$8\$1\$/);
  });

  it('shows each problem next to its field, changing nothing', async () => {
    const user = await addConsoleUser(t.ctx, a.orgId);
    const s = await signIn(app, user);
    const before = await passwordHash(user.id);
    const wrong = await change(s, 'not my password', 'a fine new password');
    expect(wrong.status).toBe(400);
    expect(fieldError(wrong.body, 'currentPassword')).toBe('Error: Current password is incorrect');
    const blank = await change(s, '', 'short', 'shorter');
    expect(fieldError(blank.body, 'currentPassword')).toBe('Error: Current password is required');
    expect(fieldError(blank.body, 'newPassword')).toBe('Error: New password must be at least 10 characters');
    expect(fieldError(blank.body, 'confirmPassword')).toBe('Error: Confirm new password does not match the new password');
    const same = await change(s, user.password, user.password);
    expect(fieldError(same.body, 'newPassword')).toBe('Error: New password must differ from the current password');
    const tooLong = await change(s, user.password, 'x'.repeat(1025));
    expect(fieldError(tooLong.body, 'newPassword')).toBe('Error: New password must be at most 1024 characters');
    for (const res of [wrong, blank, same, tooLong]) {
      expect(res.status).toBe(400);
      expect(res.body).not.toMatch(/type="password" value="[^"]/);
    }
    expect(await passwordHash(user.id)).toBe(before);
    expect(await signedIn(s.cookie)).toBe(true);
  });

  it('applies the sign-in back-off to wrong current passwords: 5 free, then locked, for sign-in too', async () => {
    const user = await addConsoleUser(t.ctx, a.orgId);
    const s = await signIn(app, user);
    for (let i = 0; i < 4; i++) expect((await change(s, `guess number ${i}`, 'a fine new password')).body).not.toContain('Too many');
    const fifth = await change(s, 'guess number 5', 'a fine new password');
    expect(fifth.body).toContain('Too many failed attempts: try again in 1 minute.');
    const locked = await change(s, user.password, 'a fine new password');
    expect(locked.status).toBe(429);
    expect(locked.body).toContain('Too many failed attempts: try again in 1 minute.');
    expect((await attemptSignIn(app, user.email, user.password)).status).toBe(429);
    clock.advance(61_000);
    expect((await change(s, user.password, 'a fine new password')).status).toBe(303);
    expect((await attemptSignIn(app, user.email, 'a fine new password')).status).toBe(303);
  });
});

describe('an administrator setting passwords', () => {
  it('resets a member\'s password and signs out all their sessions', async () => {
    const user = await addConsoleUser(t.ctx, a.orgId, { name: 'Dana Reset' });
    const one = await signIn(app, user);
    const two = await signIn(app, user);
    const list = await get(app, '/admin/config/users', admin.cookie);
    expect(list.body).toContain(`href="/admin/config/users/${user.id}/password" aria-label="Set password for Dana Reset"`);
    const form = await get(app, `/admin/config/users/${user.id}/password`, admin.cookie);
    expect(form.body).toContain('<h1>Set password for Dana Reset</h1>');

    const mismatch = await reset(admin, user.id, 'temporary password 1', 'temporary password 2');
    expect(mismatch.status).toBe(400);
    expect(fieldError(mismatch.body, 'confirmPassword')).toBe('Error: Confirm new password does not match the new password');
    expect(await signedIn(one.cookie)).toBe(true);

    const res = await reset(admin, user.id, 'temporary password 1');
    expect(res.status).toBe(303);
    expect(res.location).toBe('/admin/config/users?notice=password-set');
    expect(await signedIn(one.cookie)).toBe(false);
    expect(await signedIn(two.cookie)).toBe(false);
    expect(await signedIn(admin.cookie)).toBe(true);
    expect((await attemptSignIn(app, user.email, user.password)).status).toBe(401);
    expect((await attemptSignIn(app, user.email, 'temporary password 1')).status).toBe(303);
  });

  it('gives console access to a user created without a password, and removes it again', async () => {
    const email = `owner.only.${a.orgId}@example.com`;
    const { id: ownerId } = await createUser(t.ctx, { organizationId: a.orgId, email, name: 'Owner Only' });
    const before = (await get(app, `/admin/config/users/${ownerId}/password`, admin.cookie)).body;
    expect(before).toContain('cannot sign in to the console yet');
    expect(before).not.toContain(`/admin/config/users/${ownerId}/remove-access`);
    expect((await reset(admin, ownerId, 'first password ever')).status).toBe(303);
    const owner = await signIn(app, { id: ownerId, email, password: 'first password ever' });

    expect((await get(app, `/admin/config/users/${ownerId}/password`, admin.cookie)).body).toContain(`/admin/config/users/${ownerId}/remove-access`);
    const removed = await submit(app, admin, `/admin/config/users/${ownerId}/remove-access`);
    expect(removed.status).toBe(303);
    expect(removed.location).toBe('/admin/config/users?notice=access-removed');
    expect(await signedIn(owner.cookie)).toBe(false);
    expect(await passwordHash(ownerId)).toBeNull();
    expect((await attemptSignIn(app, email, 'first password ever')).status).toBe(401);
  });

  it('lifts the account\'s sign-in lock with a reset (it guarded the old password)', async () => {
    const user = await addConsoleUser(t.ctx, a.orgId);
    for (let i = 0; i < 5; i++) await attemptSignIn(app, user.email, 'forgotten password');
    expect((await attemptSignIn(app, user.email, user.password)).status).toBe(429);
    expect((await reset(admin, user.id, 'a reset password')).status).toBe(303);
    expect((await attemptSignIn(app, user.email, 'a reset password')).status).toBe(303);
  });

  it('never resets or removes their own password: that needs the current one', async () => {
    expect((await get(app, `/admin/config/users/${admin.userId}/password`, admin.cookie)).location).toBe('/admin/account');
    const own = await reset(admin, admin.userId, 'no current needed');
    expect(own.status).toBe(409);
    expect(own.body).toContain('Change your own password from your account page');
    expect((await submit(app, admin, `/admin/config/users/${admin.userId}/remove-access`)).status).toBe(409);
    expect(await signedIn(admin.cookie)).toBe(true);
  });

  it('is refused to members on the server, whatever the page shows', async () => {
    const member = await signIn(app, await addConsoleUser(t.ctx, a.orgId));
    const target = await addConsoleUser(t.ctx, a.orgId);
    const targetSession = await signIn(app, target);
    const before = await passwordHash(admin.userId);
    const users = await get(app, '/admin/config/users', member.cookie);
    expect(users.body).not.toContain('Set password');
    expect(users.body).not.toContain('remove-access');
    for (const [url, fields] of [
      [`/admin/config/users/${admin.userId}/password`, { newPassword: pw('taken over by a member'), confirmPassword: 'taken over by a member' }],
      [`/admin/config/users/${target.id}/password`, { newPassword: pw('taken over by a member'), confirmPassword: 'taken over by a member' }],
      [`/admin/config/users/${admin.userId}/remove-access`, {}],
      [`/admin/config/users/${target.id}/remove-access`, {}],
    ] as const) {
      const res = await submit(app, member, url, fields);
      expect(res.status, url).toBe(403);
      expect(res.body).toContain('Administrators only');
    }
    expect((await get(app, `/admin/config/users/${target.id}/password`, member.cookie)).status).toBe(403);
    expect(await passwordHash(admin.userId)).toBe(before);
    expect(await signedIn(admin.cookie)).toBe(true);
    expect(await signedIn(targetSession.cookie)).toBe(true);
  });

  it('answers 404 for another organization\'s user', async () => {
    const b = await seedOrg(t.ctx);
    const other = await addConsoleUser(t.ctx, b.orgId);
    expect((await get(app, `/admin/config/users/${other.id}/password`, admin.cookie)).status).toBe(404);
    expect((await reset(admin, other.id, 'cross org password')).status).toBe(404);
    expect((await submit(app, admin, `/admin/config/users/${other.id}/remove-access`)).status).toBe(404);
    expect((await attemptSignIn(app, other.email, other.password)).status).toBe(303);
  });
});

describe('CSRF', () => {
  it('refuses password changes and resets without the session\'s token', async () => {
    const user = await addConsoleUser(t.ctx, a.orgId);
    const s = await signIn(app, user);
    const other = await signIn(app, await addConsoleUser(t.ctx, a.orgId, { admin: true }));
    const before = await passwordHash(user.id);
    for (const csrf of [null, 'forged', other.csrf]) {
      const own = await post(app, '/admin/account/password', { currentPassword: user.password, newPassword: pw('hijacked password'), confirmPassword: 'hijacked password' }, { cookie: s.cookie, csrf });
      expect(own.status).toBe(403);
      expect(own.body).toContain('Form expired');
      const byAdmin = await post(app, `/admin/config/users/${user.id}/password`, { newPassword: pw('hijacked password'), confirmPassword: 'hijacked password' }, { cookie: admin.cookie, csrf });
      expect(byAdmin.status).toBe(403);
      expect((await post(app, `/admin/config/users/${user.id}/remove-access`, {}, { cookie: admin.cookie, csrf })).status).toBe(403);
    }
    expect(await passwordHash(user.id)).toBe(before);
    expect(await signedIn(s.cookie)).toBe(true);
  });
});

describe('logs', () => {
  it('never carry a password typed in this file', () => {
    const text = logLines.join('');
    expect(text).toContain('/admin/account/password');
    for (const secret of typed) if (secret.length >= 10) expect(text.includes(secret), secret).toBe(false);
  });
});
