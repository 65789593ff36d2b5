/**
 * `npm run screenshots`: seeds a demo organization on a throw-away database, drives the console in headless
 * Chromium and writes PNGs of the main pages to docs/console/ (embedded by docs/console.md).
 */
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Locator, Page } from 'playwright-core';
import { inTransaction } from '../src/db/transaction.js';
import { ManualClock } from '../src/lib/clock.js';
import { listDeals, updateDeal } from '../src/modules/deals/deals.service.js';
import { WebhookDispatcher } from '../src/modules/webhooks/dispatcher.js';
import { createWebhook, listWebhookDeliveries } from '../src/modules/webhooks/webhooks.service.js';
import { launchChromium } from '../test/helpers/browser.js';
import { Receiver, eventually } from '../test/helpers/receiver.js';
import { seedCrmDemo } from './demo-crm.js';
import { seedDemo, startDemoApp } from './demo-data.js';

const OUT = new URL('../docs/console/', import.meta.url);
const clock = new ManualClock('2026-05-12T07:30:00.000Z');

/** The viewport, or one part of the page (a panel below the fold). */
async function shot(target: Page | Locator, name: string): Promise<void> {
  // A click that submits a form returns before the next page has loaded.
  await ('page' in target ? target.page() : target).waitForLoadState();
  await target.screenshot({ path: new URL(`${name}.png`, OUT).pathname, animations: 'disabled', caret: 'hide' });
  console.log(`docs/console/${name}.png`);
}

mkdirSync(OUT, { recursive: true });
// The demo receiver listens on 127.0.0.1, which only WEBHOOK_ALLOW_PRIVATE_NETWORKS lets endpoints use.
const demo = await startDemoApp({ clock, env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
const browser = await launchChromium();
const receiver = await Receiver.start();
let dispatcher: WebhookDispatcher | undefined;
try {
  const seeded = await seedDemo(demo.ctx, { leads: 1_240, withEvents: 40, clock });
  await seedCrmDemo(demo.ctx, seeded, clock);
  // Listed beside the one added in the console; subscribed to stage changes only, so the seeded events pass them by.
  await inTransaction(demo.ctx, (trx) => createWebhook(demo.ctx, trx, seeded.orgId, { url: 'https://warehouse.northwind.example/crm-events', events: ['deal.stage_changed', 'deal.created'], description: 'Data warehouse' }));
  await inTransaction(demo.ctx, (trx) => createWebhook(demo.ctx, trx, seeded.orgId, { url: 'https://old-zapier.example/hooks/123', events: ['*'], description: 'Old Zapier flow', enabled: false }));
  dispatcher = new WebhookDispatcher(demo.ctx, { pollIntervalMs: 100 }).start();
  await demo.app.listen({ host: '127.0.0.1', port: 0 });
  const baseURL = `http://127.0.0.1:${(demo.app.server.address() as AddressInfo).port}`;
  const context = await browser.newContext({ baseURL, viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 });
  const page = await context.newPage();
  page.on('dialog', (d) => void d.accept());

  await page.goto('/admin/sign-in');
  await shot(page, 'sign-in');
  await page.getByLabel('E-mail').fill(seeded.admin.email);
  await page.getByLabel('Password').fill(seeded.admin.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL('**/admin');
  await shot(page, 'dashboard');

  await page.getByRole('link', { name: 'Leads', exact: true }).first().click();
  await shot(page, 'leads');
  await page.getByRole('link', { name: 'New lead' }).click();
  await page.getByLabel('Name').fill('Émilie du Châtelet');
  await page.getByLabel('E-mail').fill('emilie@physique.example');
  await page.getByLabel('Phone number').fill('01 42 68 53 00');
  await page.getByLabel('Source').selectOption('REFERRAL');
  await page.getByRole('button', { name: 'Create lead' }).click();
  await shot(page, 'lead-form-errors');
  await page.getByLabel('Phone number').fill('+33 1 42 68 53 00');
  await page.getByRole('button', { name: 'Create lead' }).click();
  await page.waitForURL(/notice=created/);
  await shot(page, 'lead-detail');
  const history = page.getByRole('region', { name: 'History' });
  await history.getByLabel('Title').fill('Send her the translation of the Principia');
  await history.getByLabel('Due date').fill('2026-05-15');
  await history.getByRole('button', { name: 'Add task' }).click();
  await page.getByText('Task added.').waitFor();
  await shot(page.getByRole('region', { name: 'History' }), 'lead-timeline');
  await page.getByRole('button', { name: 'Delete Émilie du Châtelet' }).click();
  await page.waitForURL(/trash\?notice=deleted/);
  await shot(page, 'trash');

  await page.getByRole('link', { name: 'API keys' }).click();
  await page.getByLabel('Name').fill('CRM sync');
  for (const scope of ['leads:read', 'leads:write', 'accounts:read']) await page.getByLabel(scope).check();
  await page.getByRole('button', { name: 'Create key' }).click();
  await shot(page, 'api-keys');

  await page.getByRole('link', { name: 'Assignment rules' }).click();
  await shot(page, 'assignment-rules');
  await page.getByRole('link', { name: 'Organization settings' }).click();
  await shot(page, 'settings');
  await page.getByRole('link', { name: 'Users' }).click();
  await shot(page, 'users');
  await page.getByRole('link', { name: /^Set password for / }).first().click();
  await shot(page, 'user-password');
  await page.getByRole('link', { name: 'Your account' }).click();
  await page.getByLabel('Current password').fill('not the password');
  await page.getByLabel('New password', { exact: true }).fill('a new passphrase');
  await page.getByLabel('Confirm new password').fill('a new passphrase');
  await page.getByRole('button', { name: 'Change password' }).click();
  await shot(page, 'account');

  await page.getByRole('link', { name: 'Accounts', exact: true }).first().click();
  await shot(page, 'accounts');
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Deals' }).click();
  await page.getByRole('navigation', { name: 'Deal views' }).getByRole('link', { name: 'Board' }).click();
  await shot(page, 'deals-board');
  await page.goto('/admin/config/objects/projects/definition');
  await shot(page, 'custom-object');
  await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Projects' }).click();
  await shot(page, 'records');

  await page.getByRole('link', { name: 'Configuration' }).click();
  await page.getByRole('main').getByRole('link', { name: 'Marketplace' }).click();
  await page.getByRole('main').getByRole('link', { name: 'API and Webhooks' }).click();
  await page.getByRole('link', { name: 'Add endpoint' }).click();
  await page.getByLabel('Endpoint URL').fill(receiver.url('/northwind-sync'));
  for (const type of ['deal.stage_changed', 'account.updated']) await page.getByLabel(type).check();
  await page.getByLabel('Description').fill('Sales dashboard sync');
  await page.getByRole('button', { name: 'Add endpoint' }).click();
  await shot(page, 'webhook-secret');
  await page.getByRole('link', { name: 'Go to the endpoint' }).click();
  await page.getByRole('button', { name: 'Send test event' }).click();
  const endpointUrl = page.url().split('?')[0]!;
  const endpointId = endpointUrl.split('/').pop()!;
  const caller = { organizationId: seeded.orgId, actor: { type: 'USER' as const, id: seeded.adminId, channel: 'UI' as const } };
  const [deal] = (await listDeals(demo.ctx, seeded.orgId, { stage: 'negotiation', page: 1, limit: 1 })).deals;
  await inTransaction(demo.ctx, (trx) => updateDeal(demo.ctx, trx, caller, deal!.id, { stage: 'won' }));
  await eventually(async () => {
    const log = await listWebhookDeliveries(demo.ctx, seeded.orgId, endpointId, { page: 1, limit: 10 });
    if (log.deliveries.filter((d) => d.status === 'SUCCEEDED').length < 2) throw new Error('deliveries still on their way');
  }, 10_000);
  await page.goto(endpointUrl);
  await shot(page, 'webhook-deliveries');
  await page.getByRole('link', { name: 'API and Webhooks' }).first().click();
  await shot(page, 'webhooks');

  await page.goto('/admin/config/privacy');
  await shot(page, 'privacy');

  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto('/admin/data/leads');
  await page.getByRole('button', { name: 'Menu' }).click();
  await shot(page, 'mobile-menu');
  await context.close();
} finally {
  await browser.close();
  await receiver.close();
  await dispatcher?.stop();
  await demo.close();
}
