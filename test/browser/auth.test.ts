import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSetupToken } from '../../src/admin/auth/setup.service.js';
import { ManualClock } from '../../src/lib/clock.js';
import { createOrganization } from '../../src/modules/orgs/orgs.service.js';
import { addConsoleUser } from '../helpers/admin.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import type { Page } from 'playwright-core';
import { fieldErrorOf, signInAs, startLiveConsole, type LiveConsole } from '../helpers/browser.js';

let live: LiveConsole;
let org: Seeded;
const clock = new ManualClock('2026-03-02T09:00:00.000Z');

beforeAll(async () => {
  live = await startLiveConsole({ clock });
  org = await seedOrg(live.t.ctx);
});
afterAll(() => live?.close());
afterEach(() => live.expectCleanPages());

/** A page on another origin of the same host (same site, so Lax cookies go along): only the CSRF token stops it. */
async function attackerSite(target: string, token: string | null): Promise<{ url: string; server: Server }> {
  const field = token === null ? '' : `<input type="hidden" name="_csrf" value="${token}">`;
  const server = createServer((_req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end(`<form id="f" method="post" action="${target}">${field}<input name="name" value="Pwned"><input name="timezone" value="UTC"></form><script>document.getElementById('f').submit()</script>`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, server };
}

describe('signing in', () => {
  it('shows a message for a bad password, locks out after repeated failures, then lets the right password in', async () => {
    const user = await addConsoleUser(live.t.ctx, org.orgId, { admin: true });
    const { page } = await live.newPage();
    await page.goto('/admin');
    expect(await page.locator('h1').textContent()).toBe('Sign in');
    for (let i = 1; i <= 5; i++) {
      await page.getByLabel('E-mail').fill(user.email);
      await page.getByLabel('Password').fill('wrong password');
      await page.getByRole('button', { name: 'Sign in' }).click();
      const alert = page.getByRole('alert');
      expect(await alert.textContent()).toContain('The e-mail or password is incorrect.');
      if (i === 5) expect(await alert.textContent()).toContain('Too many failed attempts: try again in 1 minute.');
    }
    expect(await page.getByLabel('E-mail').inputValue()).toBe(user.email);
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    expect(await page.getByRole('alert').textContent()).toContain('Too many failed attempts');
    clock.advance(61_000);
    await page.getByLabel('Password').fill(user.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/admin');
    expect(await page.locator('h1').textContent()).toBe('Dashboard');
  });

  it('offers a skip link as the first tab stop and marks the current page in the navigation', async () => {
    const user = await addConsoleUser(live.t.ctx, org.orgId);
    const { page } = await live.newPage();
    await signInAs(page, user.email, user.password);
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Leads' }).click();
    await page.waitForURL('**/admin/data/leads');
    expect(await page.locator('a[aria-current="page"]').textContent()).toBe('Leads');
    await page.keyboard.press('Tab');
    const focused = page.locator(':focus');
    expect(await focused.textContent()).toBe('Skip to main content');
    await page.keyboard.press('Enter');
    expect(await page.locator(':focus').getAttribute('id')).toBe('main');
  });

  it('signs out, after which console pages ask for sign-in again', async () => {
    const user = await addConsoleUser(live.t.ctx, org.orgId);
    const { page } = await live.newPage();
    await signInAs(page, user.email, user.password);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/admin/sign-in?notice=signed-out');
    expect(await page.getByRole('status').textContent()).toBe('You are signed out.');
    await page.goto('/admin/config/api-keys');
    expect(new URL(page.url()).pathname).toBe('/admin/sign-in');
  });

  it('creates the first administrator from a setup link', async () => {
    const fresh = await createOrganization(live.t.ctx, { name: 'Brand New Co' });
    const { token } = await createSetupToken(live.t.ctx, fresh.id);
    const { page } = await live.newPage();
    await page.goto(`/admin/setup?token=${token}`);
    await page.getByLabel('Your name').fill('Grace Hopper');
    await page.getByLabel('E-mail').fill('grace@brandnew.example');
    // Two mistakes at once (too short, and a different confirmation): both are shown, not the mismatch alone.
    await page.getByLabel('Password', { exact: true }).fill('short');
    await page.getByLabel('Confirm password').fill('shorter');
    await page.getByRole('button', { name: 'Create administrator' }).click();
    expect(await fieldErrorOf(page, 'Password')).toBe('Error: Password must be at least 10 characters');
    expect(await fieldErrorOf(page, 'Confirm password')).toBe('Error: Confirm password does not match the password');
    await page.getByLabel('Password', { exact: true }).fill('a long password');
    await page.getByLabel('Confirm password').fill('a long password');
    await page.getByRole('button', { name: 'Create administrator' }).click();
    await page.waitForURL('**/admin?notice=welcome');
    expect(await page.locator('.org-name').textContent()).toBe('Brand New Co');
  });
});

describe('CSRF', () => {
  it('refuses a cross-origin form post without the token, and with a wrong one, with the 403 page', async () => {
    const user = await addConsoleUser(live.t.ctx, org.orgId, { admin: true });
    const { page } = await live.newPage();
    await signInAs(page, user.email, user.password);
    for (const token of [null, 'guessed-token']) {
      const attacker = await attackerSite(`${live.baseUrl}/admin/config/settings`, token);
      try {
        const response = page.waitForResponse((r) => r.url().endsWith('/admin/config/settings') && r.request().method() === 'POST');
        await page.goto(attacker.url);
        expect((await response).status()).toBe(403);
        await page.waitForURL('**/admin/config/settings');
        expect(await page.locator('h1').textContent()).toBe('Form expired');
      } finally {
        attacker.server.close();
      }
    }
    await page.goto('/admin/config/settings');
    expect(await page.getByLabel('Organization name').inputValue()).not.toBe('Pwned');
    // The only off-site requests were the two attacker pages themselves.
    expect(live.offsiteRequests.splice(0)).toHaveLength(2);
  });
});

describe('passwords', () => {
  /** The sign-in form refuses this password: it comes back with its alert. */
  async function expectSignInRefused(page: Page, email: string, password: string): Promise<void> {
    await page.goto('/admin/sign-in');
    await page.getByLabel('E-mail').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    expect(await page.getByRole('alert').textContent()).toContain('The e-mail or password is incorrect.');
  }

  async function expectSignedIn(page: Page, email: string, password: string): Promise<void> {
    await signInAs(page, email, password);
    expect(await page.locator('h1').textContent()).toBe('Dashboard');
  }

  it('changes your own password: wrong current password refused in place, other sessions signed out, only the new one signs in', async () => {
    const user = await addConsoleUser(live.t.ctx, org.orgId);
    const { page } = await live.newPage();
    const { page: elsewhere } = await live.newPage();
    await signInAs(page, user.email, user.password);
    await signInAs(elsewhere, user.email, user.password);

    await page.getByRole('link', { name: 'Your account' }).click();
    await page.waitForURL('**/admin/account');
    await page.getByLabel('Current password').fill('not my password');
    await page.getByLabel('New password', { exact: true }).fill('a brand new password');
    await page.getByLabel('Confirm new password').fill('a brand new password');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByRole('alert').waitFor();
    expect(await fieldErrorOf(page, 'Current password')).toBe('Error: Current password is incorrect');
    expect(await page.getByLabel('New password', { exact: true }).inputValue()).toBe('');

    await page.getByLabel('Current password').fill(user.password);
    await page.getByLabel('New password', { exact: true }).fill('a brand new password');
    await page.getByLabel('Confirm new password').fill('a brand new password');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.waitForURL('**/admin/account?notice=password-changed');
    expect(await page.getByRole('status').textContent()).toBe('Your password was changed. Your other sessions were signed out.');
    await page.goto('/admin');
    expect(await page.locator('h1').textContent()).toBe('Dashboard');

    await elsewhere.goto('/admin');
    expect(new URL(elsewhere.url()).pathname).toBe('/admin/sign-in');
    expect(await elsewhere.getByRole('status').textContent()).toBe('Your session has ended. Sign in again to continue.');
    await expectSignInRefused(elsewhere, user.email, user.password);
    await expectSignedIn(elsewhere, user.email, 'a brand new password');
  });

  it('lets an administrator reset a member\'s password, then remove their console access, signing them out each time', async () => {
    const admin = await addConsoleUser(live.t.ctx, org.orgId, { admin: true });
    const member = await addConsoleUser(live.t.ctx, org.orgId, { name: 'Morgan Member' });
    const { page } = await live.newPage();
    const { page: memberPage } = await live.newPage();
    await signInAs(page, admin.email, admin.password);
    await signInAs(memberPage, member.email, member.password);

    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Users' }).click();
    await page.getByRole('link', { name: 'Set password for Morgan Member' }).click();
    expect(await page.locator('h1').textContent()).toBe('Set password for Morgan Member');
    await page.getByLabel('New password', { exact: true }).fill('given by the admin');
    await page.getByLabel('Confirm new password').fill('given by the admin');
    await page.getByRole('button', { name: 'Set password' }).click();
    await page.waitForURL('**/admin/config/users?notice=password-set');
    expect(await page.getByRole('status').textContent()).toContain('Password set.');

    await memberPage.goto('/admin');
    expect(new URL(memberPage.url()).pathname).toBe('/admin/sign-in');
    await expectSignInRefused(memberPage, member.email, member.password);
    await expectSignedIn(memberPage, member.email, 'given by the admin');

    await page.getByRole('link', { name: 'Set password for Morgan Member' }).click();
    await page.getByRole('button', { name: 'Remove Morgan Member\'s console access' }).click();
    await page.waitForURL('**/admin/config/users?notice=access-removed');
    expect(await page.getByRole('row', { name: /Morgan Member/ }).textContent()).toContain('no sign-in');
    await memberPage.goto('/admin');
    expect(new URL(memberPage.url()).pathname).toBe('/admin/sign-in');
    await expectSignInRefused(memberPage, member.email, 'given by the admin');
  }, 90_000);
});
