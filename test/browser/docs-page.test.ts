import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLiveConsole, type LiveConsole } from '../helpers/browser.js';

let live: LiveConsole;

beforeAll(async () => {
  live = await startLiveConsole();
});
afterAll(() => live?.close());

/** The API reference renders under its own Content-Security-Policy without the browser refusing anything. */
describe('/docs', () => {
  it('renders the reference with no console error (no CSP violation) and nothing fetched off-site', async () => {
    const { page } = await live.newPage();
    await page.goto('/docs');
    // Swagger UI lays out the whole document (≈ 370 kB, 109 operations) before it shows the first operation.
    await page.locator('.opblock').first().waitFor({ timeout: 40_000 });
    await page.locator('.opblock-summary').first().click();
    await page.locator('.opblock-body').first().waitFor();
    live.expectCleanPages();
  }, 60_000);
});
