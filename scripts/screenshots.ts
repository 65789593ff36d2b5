/**
 * `npm run screenshots`: seeds a demo organization on a throw-away database, drives the console in headless
 * Chromium and writes PNGs of the main pages to docs/console/ (embedded by docs/console.md).
 */
import { mkdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { ManualClock } from '../src/lib/clock.js';
import { launchChromium } from '../test/helpers/browser.js';
import { seedDemo, startDemoApp } from './demo-data.js';

const OUT = new URL('../docs/console/', import.meta.url);
const clock = new ManualClock('2026-05-12T07:30:00.000Z');

async function shot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: new URL(`${name}.png`, OUT).pathname, animations: 'disabled', caret: 'hide' });
  console.log(`docs/console/${name}.png`);
}

mkdirSync(OUT, { recursive: true });
const demo = await startDemoApp({ clock });
const browser = await launchChromium();
try {
  const seeded = await seedDemo(demo.ctx, { leads: 1_240, withEvents: 40, clock });
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

  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto('/admin/data/leads');
  await page.getByRole('button', { name: 'Menu' }).click();
  await shot(page, 'mobile-menu');
  await context.close();
} finally {
  await browser.close();
  await demo.close();
}
