import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';
import type { Clock } from '../../src/lib/clock.js';
import { buildTestApp, type TestApp } from './test-app.js';

/** Debian's Chromium (apt-get install chromium), headless, with everything that would reach the network off. */
export const CHROMIUM_PATH = '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'];

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
}

export interface LiveConsole {
  t: TestApp;
  baseUrl: string;
  browser: Browser;
  /** Requests any page made to another origin (there must be none: no CDN, no fonts). */
  offsiteRequests: string[];
  /** Console errors of every page (CSP violations, script errors); the 4xx answers forms get are expected. */
  consoleErrors: string[];
  /** Asserts nothing went off-site and nothing broke in a page since the last call, then starts afresh. */
  expectCleanPages(): void;
  /** A fresh browser profile (own cookies), with the base URL set and dialogs accepted. */
  newPage(): Promise<{ context: BrowserContext; page: Page }>;
  close(): Promise<void>;
}

/** The real app on a real port (127.0.0.1, any free port) and a browser to drive it. */
export async function startLiveConsole(opts: { clock?: Clock; env?: Record<string, string> } = {}): Promise<LiveConsole> {
  const t = await buildTestApp({ ...(opts.clock ? { clock: opts.clock } : {}), ...(opts.env ? { env: opts.env } : {}) });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = t.app.server.address() as AddressInfo;
  const baseUrl = `http://127.0.0.1:${port}`;
  const browser = await launchChromium();
  const contexts: BrowserContext[] = [];
  const offsiteRequests: string[] = [];
  const consoleErrors: string[] = [];
  return {
    t,
    baseUrl,
    browser,
    offsiteRequests,
    consoleErrors,
    expectCleanPages() {
      const offsite = offsiteRequests.splice(0);
      const errors = consoleErrors.splice(0).filter((e) => !/^Failed to load resource: the server responded with a status of 4\d\d/.test(e));
      expect(offsite).toEqual([]);
      expect(errors).toEqual([]);
    },
    async newPage() {
      const context = await browser.newContext({ baseURL: baseUrl });
      // Fail with the locator's message, well before the test's own timeout.
      context.setDefaultTimeout(8_000);
      contexts.push(context);
      const page = await context.newPage();
      page.on('dialog', (dialog) => void dialog.accept());
      page.on('request', (request) => {
        if (new URL(request.url()).origin !== baseUrl) offsiteRequests.push(request.url());
      });
      page.on('console', (message) => {
        if (message.type() === 'error') consoleErrors.push(message.text());
      });
      return { context, page };
    },
    async close() {
      for (const c of contexts) await c.close().catch(() => undefined);
      await browser.close();
      await t.close();
    },
  };
}

/** Signs in through the form, by its visible labels. */
export async function signInAs(page: Page, email: string, password: string): Promise<void> {
  await page.goto('/admin/sign-in');
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => !url.pathname.startsWith('/admin/sign-in'));
}

/** The text of a field's in-place error (the paragraph its input points to with aria-describedby). */
export async function fieldErrorOf(page: Page, inputLabel: string): Promise<string> {
  const escaped = inputLabel.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const input = page.getByLabel(new RegExp(`^${escaped}( \\(optional\\))?$`));
  if ((await input.getAttribute('aria-invalid')) !== 'true') return '';
  const ids = ((await input.getAttribute('aria-describedby')) ?? '').split(' ').filter((id) => id.endsWith('-error'));
  return ids.length ? ((await page.locator(`#${ids[0]}`).textContent()) ?? '').trim() : '';
}
