import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { hashSecret } from '../../src/crypto/secrets.js';
import { createSetupToken } from '../../src/admin/auth/setup.service.js';
import { recordFailure, signInKeys } from '../../src/admin/auth/throttle.service.js';
import { createOrganization } from '../../src/modules/orgs/orgs.service.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { addConsoleUser, attemptSignIn, csrfOf, fieldError, get, post, signIn, submit } from '../helpers/admin.js';

let t: TestApp;
let a: Seeded;
const clock = new ManualClock('2026-03-02T09:00:00.000Z');

beforeAll(async () => {
  t = await buildTestApp({ clock });
  a = await seedOrg(t.ctx);
});
afterAll(() => t?.close());

describe('sign-in', () => {
  it('sends anonymous visitors to the sign-in form, remembering the page', async () => {
    const res = await get(t.app, '/admin/config/api-keys');
    expect(res.status).toBe(303);
    expect(res.location).toBe('/admin/sign-in?next=%2Fadmin%2Fconfig%2Fapi-keys');
    const form = await get(t.app, '/admin/sign-in?next=/admin/config/api-keys');
    expect(form.body).toContain('name="next" value="/admin/config/api-keys"');
    expect(form.headers['content-security-policy']).toContain("default-src 'none'");
    expect(form.headers['x-frame-options']).toBe('DENY');
  });

  it('opens a session in an httpOnly, SameSite=Lax cookie scoped to /admin, stored only as a hash', async () => {
    const user = await addConsoleUser(t.ctx, a.orgId);
    const res = await attemptSignIn(t.app, user.email, user.password);
    expect(res.status).toBe(303);
    expect(res.location).toBe('/admin');
    const setCookie = ([] as string[]).concat(res.headers['set-cookie'] as string[]).find((c) => c.startsWith('crm_session='))!;
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Lax/);
    expect(setCookie).toMatch(/Path=\/admin/);
    expect(setCookie).not.toMatch(/Secure/);
    const token = res.sessionCookie!.split('=')[1]!;
    const rows = await t.ctx.database.db.selectFrom('admin_sessions').selectAll().where('user_id', '=', user.id).execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.token_hash).toBe(hashSecret(token));
    expect(JSON.stringify(rows)).not.toContain(token);
  });

  it('marks the cookie Secure when the request came over https (behind a trusted proxy)', async () => {
    const proxied = await buildTestApp({ env: { TRUST_PROXY: 'true' }, sameDatabaseAs: t, clock });
    try {
      const org = await seedOrg(proxied.ctx);
      const user = await addConsoleUser(proxied.ctx, org.orgId);
      const res = await attemptSignIn(proxied.app, user.email, user.password, { 'x-forwarded-proto': 'https' });
      expect(res.status).toBe(303);
      expect(([] as string[]).concat(res.headers['set-cookie'] as string[]).find((c) => c.startsWith('crm_session='))).toMatch(/; Secure/);
    } finally {
      await proxied.close();
    }
  });

  it('answers a wrong password and an unknown e-mail with the same message, in place', async () => {
    const user = await addConsoleUser(t.ctx, a.orgId);
    const wrong = await attemptSignIn(t.app, user.email, 'not the password');
    const unknown = await attemptSignIn(t.app, 'nobody@example.com', 'whatever password');
    for (const res of [wrong, unknown]) {
      expect(res.status).toBe(401);
      expect(res.body).toContain('The e-mail or password is incorrect.');
      expect(res.sessionCookie).toBeUndefined();
    }
    expect(wrong.body).toContain(`value="${user.email}"`);
  });

  it('refuses users without a password', async () => {
    const res = await attemptSignIn(t.app, `owner1.${a.orgId}@example.com`, 'anything at all');
    expect(res.status).toBe(401);
  });

  it('locks an account after 5 failures, doubling the wait, and forgets after a success', async () => {
    const user = await addConsoleUser(t.ctx, a.orgId);
    for (let i = 0; i < 4; i++) expect((await attemptSignIn(t.app, user.email, 'bad password')).body).not.toContain('Too many');
    const fifth = await attemptSignIn(t.app, user.email, 'bad password');
    expect(fifth.body).toContain('Too many failed attempts: try again in 1 minute.');
    const locked = await attemptSignIn(t.app, user.email, user.password);
    expect(locked.status).toBe(429);
    expect(locked.sessionCookie).toBeUndefined();
    clock.advance(61_000);
    expect((await attemptSignIn(t.app, user.email, 'bad password')).body).toContain('try again in 2 minutes');
    clock.advance(121_000);
    expect((await attemptSignIn(t.app, user.email, user.password)).status).toBe(303);
    expect((await attemptSignIn(t.app, user.email, 'bad password')).body).not.toContain('Too many');
  });

  it('locks a client IP after 20 failures across accounts', async () => {
    const headers = { 'x-forwarded-for': '203.0.113.9' };
    const proxied = await buildTestApp({ env: { TRUST_PROXY: 'true' }, sameDatabaseAs: t, clock });
    try {
      const org = await seedOrg(proxied.ctx);
      const user = await addConsoleUser(proxied.ctx, org.orgId);
      // 19 earlier failures from this IP (each against another account), recorded directly to spare 19 scrypt runs.
      for (let i = 0; i < 19; i++) await recordFailure(proxied.ctx, signInKeys(`guess-${i}`, '203.0.113.9'));
      expect((await attemptSignIn(proxied.app, 'guess-20@example.com', 'bad password', headers)).body).toContain('Too many failed attempts');
      expect((await attemptSignIn(proxied.app, user.email, user.password, headers)).status).toBe(429);
      expect((await attemptSignIn(proxied.app, user.email, user.password, { 'x-forwarded-for': '198.51.100.7' })).status).toBe(303);
    } finally {
      await proxied.close();
    }
  });

  it('follows only console paths after sign-in', async () => {
    const user = await addConsoleUser(t.ctx, a.orgId);
    const form = await t.app.inject({ method: 'GET', url: '/admin/sign-in' });
    const cookie = String(form.headers['set-cookie']).split(';')[0]!;
    for (const [next, expected] of [['//evil.example', '/admin'], ['https://evil.example/admin', '/admin'], ['/admin/data/leads?q=x', '/admin/data/leads?q=x']]) {
      const res = await post(t.app, '/admin/sign-in', { email: user.email, password: user.password, next: next! }, { cookie, csrf: csrfOf(form.body) });
      expect(res.location).toBe(expected);
    }
  });
});

describe('sessions', () => {
  it('ends after 12 idle hours, and slides while in use', async () => {
    const user = await addConsoleUser(t.ctx, a.orgId);
    const s = await signIn(t.app, user);
    clock.advance(11 * 3_600_000);
    expect((await get(t.app, '/admin', s.cookie)).status).toBe(200);
    clock.advance(11 * 3_600_000);
    expect((await get(t.app, '/admin', s.cookie)).status).toBe(200);
    clock.advance(12 * 3_600_000 + 1000);
    const expired = await get(t.app, '/admin', s.cookie);
    expect(expired.status).toBe(303);
    expect(expired.location).toContain('notice=session-ended');
  });

  it('signs out: the old cookie opens nothing afterwards', async () => {
    const user = await addConsoleUser(t.ctx, a.orgId);
    const s = await signIn(t.app, user);
    const out = await submit(t.app, s, '/admin/sign-out');
    expect(out.status).toBe(303);
    expect(out.location).toBe('/admin/sign-in?notice=signed-out');
    expect((await get(t.app, '/admin', s.cookie)).status).toBe(303);
  });

  it('lists the user\'s sessions and revokes one, or all the others', async () => {
    const user = await addConsoleUser(t.ctx, a.orgId);
    const first = await signIn(t.app, user);
    const second = await signIn(t.app, user);
    const third = await signIn(t.app, user);
    const page = await get(t.app, '/admin/account/sessions', first.cookie);
    expect(page.body).toContain('This session');
    const ids = [...page.body.matchAll(/\/admin\/account\/sessions\/([0-9a-f]{24})\/revoke/g)].map((m) => m[1]!);
    expect(ids).toHaveLength(2);
    expect((await submit(t.app, first, `/admin/account/sessions/${ids[0]}/revoke`)).status).toBe(303);
    const remaining = [(await get(t.app, '/admin', second.cookie)).status, (await get(t.app, '/admin', third.cookie)).status].sort();
    expect(remaining).toEqual([200, 303]);
    await submit(t.app, first, '/admin/account/sessions/revoke-others');
    expect((await get(t.app, '/admin', second.cookie)).status).toBe(303);
    expect((await get(t.app, '/admin', third.cookie)).status).toBe(303);
    expect((await get(t.app, '/admin', first.cookie)).status).toBe(200);
  });

  it('refuses to revoke another user\'s session (404)', async () => {
    const one = await signIn(t.app, await addConsoleUser(t.ctx, a.orgId));
    const other = await signIn(t.app, await addConsoleUser(t.ctx, a.orgId));
    const page = await get(t.app, '/admin/account/sessions', other.cookie);
    const own = await t.ctx.database.db.selectFrom('admin_sessions').select('id').where('user_id', '=', other.userId).execute();
    expect(page.status).toBe(200);
    expect((await submit(t.app, one, `/admin/account/sessions/${own[0]!.id}/revoke`)).status).toBe(404);
    expect((await get(t.app, '/admin', other.cookie)).status).toBe(200);
  });
});

describe('CSRF', () => {
  it('refuses console POSTs without the token, with a wrong one, or with another session\'s', async () => {
    const s = await signIn(t.app, await addConsoleUser(t.ctx, a.orgId, { admin: true }));
    const other = await signIn(t.app, await addConsoleUser(t.ctx, a.orgId, { admin: true }));
    for (const csrf of [null, 'forged', other.csrf]) {
      const res = await post(t.app, '/admin/config/settings', { name: 'Hijacked', timezone: 'UTC' }, { cookie: s.cookie, csrf });
      expect(res.status).toBe(403);
      expect(res.body).toContain('Form expired');
      expect(res.headers['content-type']).toMatch(/text\/html/);
    }
    const out = await post(t.app, '/admin/sign-out', {}, { cookie: s.cookie, csrf: null });
    expect(out.status).toBe(403);
    expect((await get(t.app, '/admin/config/settings', s.cookie)).body).not.toContain('Hijacked');
  });

  it('refuses a sign-in form posted without the browser\'s form cookie', async () => {
    const user = await addConsoleUser(t.ctx, a.orgId);
    const form = await get(t.app, '/admin/sign-in');
    const res = await post(t.app, '/admin/sign-in', { email: user.email, password: user.password }, { csrf: csrfOf(form.body) });
    expect(res.status).toBe(403);
  });
});

describe('first-run setup', () => {
  it('creates the first administrator through a one-time link, then signs them in', async () => {
    const org = await createOrganization(t.ctx, { name: 'Fresh Org' });
    const { token } = await createSetupToken(t.ctx, org.id);
    const page = await t.app.inject({ method: 'GET', url: `/admin/setup?token=${token}` });
    expect(page.statusCode).toBe(200);
    expect(page.body).toContain('Fresh Org');
    const cookie = String(page.headers['set-cookie']).split(';')[0]!;
    const fields = { token, name: 'Grace', email: 'grace@fresh.example', password: 'long enough pass', confirmPassword: 'different pass!' };
    const mismatch = await post(t.app, '/admin/setup', fields, { cookie, csrf: csrfOf(page.body) });
    expect(mismatch.status).toBe(400);
    expect(fieldError(mismatch.body, 'confirmPassword')).toBe('Error: Confirm password does not match the password');
    const short = await post(t.app, '/admin/setup', { ...fields, password: 'short', confirmPassword: 'short', email: 'bad' }, { cookie, csrf: csrfOf(page.body) });
    expect(fieldError(short.body, 'password')).toContain('must be at least 10 characters');
    expect(fieldError(short.body, 'email')).toContain('must be a valid e-mail address');
    // A short password whose confirmation also differs: both are said at once, not the mismatch alone.
    const both = await post(t.app, '/admin/setup', { ...fields, password: 'short', confirmPassword: 'shorter' }, { cookie, csrf: csrfOf(page.body) });
    expect(both.status).toBe(400);
    expect(fieldError(both.body, 'password')).toBe('Error: Password must be at least 10 characters');
    expect(fieldError(both.body, 'confirmPassword')).toBe('Error: Confirm password does not match the password');
    const done = await post(t.app, '/admin/setup', { ...fields, confirmPassword: fields.password }, { cookie, csrf: csrfOf(page.body) });
    expect(done.status).toBe(303);
    const session = String(([] as string[]).concat(done.headers['set-cookie'] as string[]).find((c) => c.startsWith('crm_session='))).split(';')[0]!;
    const home = await get(t.app, done.location!, session);
    expect(home.body).toContain('Welcome!');
    expect(home.body).toContain('Grace <span class="badge badge--neutral">Admin</span>');
    expect((await get(t.app, `/admin/setup?token=${token}`)).status).toBe(404);
    await expect(createSetupToken(t.ctx, org.id)).rejects.toMatchObject({ code: 'CONFLICT' });
  });

  it('refuses unknown and expired links', async () => {
    const org = await createOrganization(t.ctx, { name: 'Late Org' });
    const { token } = await createSetupToken(t.ctx, org.id);
    expect((await get(t.app, '/admin/setup?token=nope')).status).toBe(404);
    clock.advance(24 * 3_600_000 + 1);
    expect((await get(t.app, `/admin/setup?token=${token}`)).status).toBe(404);
  });

  it('stops working once the organization has an administrator by other means', async () => {
    const org = await createOrganization(t.ctx, { name: 'Raced Org' });
    const { token } = await createSetupToken(t.ctx, org.id);
    await addConsoleUser(t.ctx, org.id, { admin: true });
    expect((await get(t.app, `/admin/setup?token=${token}`)).status).toBe(404);
  });
});
