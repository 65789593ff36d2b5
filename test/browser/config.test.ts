import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { addConsoleUser } from '../helpers/admin.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { fieldErrorOf, signInAs, startLiveConsole, type LiveConsole } from '../helpers/browser.js';

let live: LiveConsole;
let org: Seeded;

beforeAll(async () => {
  live = await startLiveConsole();
  org = await seedOrg(live.t.ctx, { timezone: 'UTC' });
});
afterAll(() => live?.close());

afterEach(() => live.expectCleanPages());

const me = (key: string) => fetch(`${live.baseUrl}/api/public/v1/me`, { headers: { authorization: `Bearer ${key}` } });

describe('API keys', () => {
  it('creates a key shown once with a copy button, and revoking it makes the API answer 401', async () => {
    const admin = await addConsoleUser(live.t.ctx, org.orgId, { admin: true });
    const { page, context } = await live.newPage();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: live.baseUrl });
    await signInAs(page, admin.email, admin.password);
    const nav = page.getByRole('navigation', { name: 'Console' });
    await nav.getByRole('link', { name: 'API keys' }).click();
    expect(await page.locator('.crumbs').textContent()).toContain('Configuration');

    await page.getByRole('button', { name: 'Create key' }).click();
    const scopes = page.getByRole('group', { name: 'Scopes' });
    expect(await scopes.getAttribute('aria-describedby')).toBe('f-scopes-error');
    expect(await scopes.locator('#f-scopes-error').textContent()).toContain('Scopes at least one scope is required');

    await page.getByLabel('Name').fill('Browser key');
    await page.getByLabel('leads:read').check();
    await page.getByLabel('leads:write').check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = page.getByRole('textbox', { name: 'Your new API key' });
    const key = await secret.inputValue();
    expect(key).toMatch(/^crm_live_/);
    await page.getByRole('button', { name: 'Copy' }).click();
    // The copy is asynchronous (navigator.clipboard.writeText): wait for the status it announces.
    await page.locator('.copy-status', { hasText: /./ }).waitFor();
    expect(await page.locator('.copy-status').textContent()).toBe('Copied to the clipboard.');
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(key);
    expect((await me(key)).status).toBe(200);

    await nav.getByRole('link', { name: 'API keys' }).click();
    expect(await page.content()).not.toContain(key);
    const row = page.getByRole('row').filter({ hasText: 'Browser key' });
    expect(await row.textContent()).toContain(`${key.slice(0, 17)}…`);
    await row.getByRole('button', { name: /Revoke key Browser key/ }).click();
    await page.waitForURL('**/admin/config/api-keys?notice=revoked');
    expect(await page.getByRole('row').filter({ hasText: 'Browser key' }).textContent()).toContain('Revoked');
    const after = await me(key);
    expect(after.status).toBe(401);
    expect(((await after.json()) as { code: string }).code).toBe('UNAUTHORIZED');
  });
});

describe('organization settings', () => {
  it('changes the time zone through the searchable list', async () => {
    const admin = await addConsoleUser(live.t.ctx, org.orgId, { admin: true });
    const { page } = await live.newPage();
    await signInAs(page, admin.email, admin.password);
    await page.getByRole('link', { name: 'Organization settings' }).click();
    const zone = page.getByLabel('Time zone');
    expect(await zone.getAttribute('list')).toBe('time-zones');
    expect(await page.locator('#time-zones option[value="Asia/Tokyo"]').count()).toBe(1);
    await zone.fill('Asia/Tokio');
    await page.getByRole('button', { name: 'Save settings' }).click();
    expect(await fieldErrorOf(page, 'Time zone')).toContain('must be an IANA time zone');
    await page.getByLabel('Time zone').fill('Asia/Tokyo');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.waitForURL('**/admin/config/settings?notice=saved');
    expect(await page.getByLabel('Time zone').inputValue()).toBe('Asia/Tokyo');
    const res = await fetch(`${live.baseUrl}/api/public/v1/me`, { headers: { authorization: `Bearer ${org.key}` } });
    expect(((await res.json()) as { data: { me: { organization: { timezone: string } } } }).data.me.organization.timezone).toBe('Asia/Tokyo');
  });
});

describe('members', () => {
  it('see configuration without its controls, and a forged change is refused with 403', async () => {
    const member = await addConsoleUser(live.t.ctx, org.orgId);
    const { page } = await live.newPage();
    await signInAs(page, member.email, member.password);
    await page.getByRole('link', { name: 'Organization settings' }).click();
    expect(await page.getByRole('button', { name: 'Save settings' }).count()).toBe(0);
    expect(await page.getByText('Only administrators can change these settings.').count()).toBe(1);
    await page.getByRole('link', { name: 'API keys' }).click();
    expect(await page.getByRole('button', { name: 'Create key' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: /Revoke/ }).count()).toBe(0);
    // The member turns the sign-out form (which carries their valid CSRF token) into a settings change.
    const response = page.waitForResponse((r) => r.url().endsWith('/admin/config/settings') && r.request().method() === 'POST');
    await page.locator('form[action="/admin/sign-out"]').evaluate((form) => {
      form.setAttribute('action', '/admin/config/settings');
      form.insertAdjacentHTML('beforeend', '<input name="name" value="Member was here"><input name="timezone" value="UTC">');
    });
    await page.getByRole('button', { name: 'Sign out' }).click();
    expect((await response).status()).toBe(403);
    await page.waitForLoadState();
    expect(await page.locator('h1').textContent()).toBe('Administrators only');
  });
});
