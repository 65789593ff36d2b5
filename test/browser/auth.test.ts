import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSetupToken } from '../../src/admin/auth/setup.service.js';
import { ManualClock } from '../../src/lib/clock.js';
import { createOrganization } from '../../src/modules/orgs/orgs.service.js';
import { addConsoleUser } from '../helpers/admin.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { signInAs, startLiveConsole, type LiveConsole } from '../helpers/browser.js';

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
