import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addConsoleUser } from '../helpers/admin.js';
import { seedOrg } from '../helpers/seed.js';
import { signInAs, startLiveConsole, type LiveConsole } from '../helpers/browser.js';

let live: LiveConsole;
let page: Page;

beforeAll(async () => {
  live = await startLiveConsole();
  const org = await seedOrg(live.t.ctx);
  const stages = ['qualification', 'proposal', 'negotiation', 'won', 'lost'];
  for (const [i, stage] of stages.entries()) {
    await fetch(`${live.baseUrl}/api/public/v1/deals`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `Enterprise rollout for the northern region ${i}`, stage, amount: '1250000.00', currency: 'EUR', expectedCloseDate: '2026-12-31' }),
    });
  }
  const user = await addConsoleUser(live.t.ctx, org.orgId, { name: 'Bea Board' });
  ({ page } = await live.newPage());
  await page.setViewportSize({ width: 1366, height: 768 });
  await signInAs(page, user.email, user.password);
});
afterAll(() => live?.close());

/** How far a box's content reaches past its visible width, in CSS pixels (0: it fits). */
const PAST = '(e) => Math.max(0, e.scrollWidth - e.clientWidth)';
const overflow = async (p: Page) => ({
  page: await p.evaluate<number>(`(${PAST})(document.documentElement)`),
  board: await p.evaluate<number>(`(${PAST})(document.querySelector('.board'))`),
  columns: await p.evaluate<number[]>(`[...document.querySelectorAll('.board-column')].map(${PAST})`),
});

describe('the deals board on a 1,366 px wide screen', () => {
  it('shows its five stage columns side by side without scrolling sideways', async () => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Deals' }).click();
    await page.getByRole('navigation', { name: 'Deal views' }).getByRole('link', { name: 'Board' }).click();
    await page.locator('.board-column').nth(4).waitFor();
    const tops = await page.locator('.board-column').evaluateAll((cols) => cols.map((c) => c.getBoundingClientRect().top));
    expect(new Set(tops).size).toBe(1);
    expect(await overflow(page)).toEqual({ page: 0, board: 0, columns: [0, 0, 0, 0, 0] });
    live.expectCleanPages();
  });
});
