import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { WebhookDispatcher } from '../../src/modules/webhooks/dispatcher.js';
import { addConsoleUser } from '../helpers/admin.js';
import { Receiver, verifyBoth } from '../helpers/receiver.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { signInAs, startLiveConsole, type LiveConsole } from '../helpers/browser.js';

let live: LiveConsole;
let org: Seeded;
let receiver: Receiver;
let dispatcher: WebhookDispatcher;
let userId: string;

beforeAll(async () => {
  // The receiver listens on 127.0.0.1, which only an operator's WEBHOOK_ALLOW_PRIVATE_NETWORKS permits.
  live = await startLiveConsole({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  dispatcher = new WebhookDispatcher(live.t.ctx, { pollIntervalMs: 50 }).start();
  receiver = await Receiver.start();
  org = await seedOrg(live.t.ctx, { timezone: 'UTC' });
});
afterAll(async () => {
  await receiver?.close();
  await dispatcher?.stop();
  await live?.close();
});
afterEach(() => live.expectCleanPages());

/** Reloads the endpoint's page until its delivery log shows `count` deliveries in `status`. */
async function waitForLog(page: Page, status: string, count: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const rows = page.getByRole('region', { name: 'Deliveries' }).locator('tbody tr').filter({ hasText: status });
    if ((await rows.count()) >= count) return;
    if (Date.now() > deadline) throw new Error(`the delivery log never showed ${count} × ${status}`);
    await page.waitForTimeout(150);
    await page.reload();
  }
}

describe('API and Webhooks', () => {
  it('adds an endpoint through Configuration › Marketplace, receives its signed test event, re-sends it, rotates, disables and deletes it', async () => {
    const admin = await addConsoleUser(live.t.ctx, org.orgId, { admin: true, name: 'Wes Webhooks' });
    userId = admin.id;
    const { page, context } = await live.newPage();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: live.baseUrl });
    await signInAs(page, admin.email, admin.password);

    // Configuration › Marketplace › API and Webhooks › Add endpoint, by the names a user sees.
    await page.getByRole('link', { name: 'Configuration' }).click();
    await page.getByRole('main').getByRole('link', { name: 'Marketplace' }).click();
    await page.getByRole('main').getByRole('link', { name: 'API and Webhooks' }).click();
    expect(await page.getByRole('navigation', { name: 'Breadcrumb' }).textContent()).toBe('ConfigurationMarketplaceAPI and Webhooks');
    await page.getByRole('link', { name: 'Add endpoint' }).click();

    await page.getByRole('button', { name: 'Add endpoint' }).click();
    expect(await page.getByRole('group', { name: 'Events' }).locator('.field-error').textContent()).toContain('Events must have at least 1 item');
    await page.getByLabel('Endpoint URL').fill(receiver.url('/crm-events'));
    await page.getByLabel('lead.created').check();
    await page.getByLabel('deal.stage_changed').check();
    await page.getByLabel('Description').fill('Warehouse sync');
    await page.getByRole('button', { name: 'Add endpoint' }).click();

    const secret = await page.getByRole('textbox', { name: 'Signing secret' }).inputValue();
    expect(secret).toMatch(/^whsec_/);
    await page.getByRole('button', { name: 'Copy' }).click();
    expect(await page.evaluate<string>('navigator.clipboard.readText()')).toBe(secret);
    await page.getByRole('link', { name: 'Go to the endpoint' }).click();
    expect(await page.content()).not.toContain(secret);
    expect(await page.locator('.details').textContent()).toContain('Enabled');

    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.waitForURL(/notice=test-sent/);
    const [received] = await receiver.waitFor('/crm-events', 1);
    const event = verifyBoth(received!, secret);
    expect(event).toMatchObject({ type: 'webhook.test', data: { object: 'webhook', actor: { type: 'USER', id: userId, channel: 'UI' } } });
    await waitForLog(page, 'Succeeded', 1);
    const entry = page.getByRole('region', { name: 'Deliveries' }).locator('tbody tr').first();
    expect(await entry.textContent()).toMatch(/webhook\.test[\s\S]*Succeeded[\s\S]*\d+ ms[\s\S]*200[\s\S]*ok/);

    await entry.getByRole('button', { name: /^Resend webhook\.test/ }).click();
    await page.waitForURL(/notice=resent/);
    const [, again] = await receiver.waitFor('/crm-events', 2);
    expect(verifyBoth(again!, secret).id).toBe(event.id);
    await waitForLog(page, 'Succeeded', 1);

    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const rotated = await page.getByRole('textbox', { name: 'New signing secret' }).inputValue();
    expect(rotated).not.toBe(secret);
    await page.getByRole('button', { name: 'Send test event' }).click();
    const [, , third] = await receiver.waitFor('/crm-events', 3);
    expect(verifyBoth(third!, rotated).type).toBe('webhook.test');

    await page.getByRole('button', { name: 'Disable' }).click();
    await page.waitForURL(/notice=disabled/);
    expect(await page.locator('.details').textContent()).toContain('Disabled by a user');
    await page.getByRole('link', { name: 'API and Webhooks' }).first().click();
    const listed = page.getByRole('row').filter({ hasText: '/crm-events' });
    expect(await listed.textContent()).toMatch(/Warehouse sync[\s\S]*lead\.created[\s\S]*Disabled by a user[\s\S]*Succeeded/);

    await listed.getByRole('link').first().click();
    await page.getByRole('link', { name: 'Delete' }).click();
    await page.getByRole('button', { name: 'Delete endpoint' }).click();
    await page.waitForURL(/notice=deleted/);
    expect(await page.getByRole('status').textContent()).toBe('Endpoint and its delivery log deleted.');
    expect(await page.getByText('No endpoints yet').count()).toBe(1);
  }, 90_000); // The longest console flow (~9 s on an idle machine): 30 s was not enough on a loaded one.
});
