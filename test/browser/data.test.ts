import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../../src/modules/events/outbox.store.js';
import { addConsoleUser } from '../helpers/admin.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { fieldErrorOf, signInAs, startLiveConsole, type LiveConsole } from '../helpers/browser.js';

let live: LiveConsole;
let org: Seeded;
let page: Page;
let userId: string;

const api = (path: string, body: unknown) =>
  fetch(`${live.baseUrl}/api/public/v1${path}`, { method: 'POST', headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.json() as Promise<any>);

beforeAll(async () => {
  live = await startLiveConsole();
  org = await seedOrg(live.t.ctx);
  for (const name of ['Babbage Engines', 'Lovelace Analytics', 'Hopper Compilers']) await api('/accounts', { name });
  for (const [name, stage] of [['Forty seats', 'proposal'], ['Mainframe upgrade', 'proposal'], ['Pilot', 'qualification']]) await api('/deals', { name, stage, amount: '1200.00', currency: 'EUR' });
  const user = await addConsoleUser(live.t.ctx, org.orgId, { name: 'Dora Data' });
  userId = user.id;
  ({ page } = await live.newPage());
  await signInAs(page, user.email, user.password);
});
afterAll(() => live?.close());
afterEach(() => live.expectCleanPages());

const names = () => page.locator('tbody td:first-child a').allTextContents();
const column = (label: string) => page.getByRole('region', { name: 'Deals by stage' }).locator('section').filter({ has: page.getByRole('heading', { name: new RegExp(`^${label}`) }) });

describe('accounts', () => {
  it('searches, then creates an account after an error shown next to its field, then edits it', async () => {
    await page.getByRole('link', { name: 'Accounts' }).first().click();
    expect(await names()).toEqual(['Hopper Compilers', 'Lovelace Analytics', 'Babbage Engines']);
    await page.getByRole('searchbox', { name: 'Search accounts' }).fill('love');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/q=love/);
    expect(await names()).toEqual(['Lovelace Analytics']);

    await page.getByRole('link', { name: 'New account' }).click();
    await page.getByLabel('Name', { exact: true }).fill('Turing Machines');
    await page.getByLabel('Website').fill('turing.example');
    await page.getByRole('button', { name: 'Create account' }).click();
    expect(await fieldErrorOf(page, 'Website')).toBe('Error: Website has an invalid format');
    await page.getByLabel('Website').fill('https://turing.example');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.waitForURL(/notice=created/);
    expect(await page.locator('h1').textContent()).toBe('Turing Machines');

    await page.getByRole('link', { name: 'Edit account' }).click();
    await page.getByLabel('Industry').fill('Computing');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.waitForURL(/notice=saved/);
    expect(await page.locator('.details').textContent()).toContain('Computing');
  });
});

describe('deals', () => {
  it('filters the table by stage, then moves a card on the board to another stage', async () => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Deals' }).click();
    await page.getByLabel('Stage').selectOption('proposal');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/stage=proposal/);
    expect(await names()).toEqual(['Mainframe upgrade', 'Forty seats']);

    await page.getByRole('navigation', { name: 'Deal views' }).getByRole('link', { name: 'Board' }).click();
    expect(await column('Proposal').locator('.deal-card-name').allTextContents()).toEqual(['Mainframe upgrade', 'Forty seats']);
    expect(await column('Won').getByText('No deals.').count()).toBe(1);
    await page.getByLabel('Move Forty seats to').selectOption('won');
    await page.getByRole('button', { name: 'Move Forty seats' }).click();
    await page.waitForURL(/notice=moved/);
    expect(await page.getByRole('status').textContent()).toBe('Deal moved to Won.');
    expect(await column('Won').locator('.deal-card-name').allTextContents()).toEqual(['Forty seats']);
    expect(await column('Proposal').locator('.deal-card-name').allTextContents()).toEqual(['Mainframe upgrade']);

    await column('Won').getByRole('link', { name: 'Forty seats' }).click();
    expect(await page.getByRole('region', { name: 'History' }).textContent()).toContain('Deal moved from Proposal to Won');
    const id = new URL(page.url()).pathname.split('/').pop()!;
    const events = await listEvents(live.t.ctx.database.db, org.orgId, { objectId: id });
    expect(events.at(-1)).toMatchObject({ type: 'deal.stage_changed', data: { actor: { type: 'USER', id: userId, channel: 'UI' } } });
  });

  it('orders the table by name with the list controls, and keeps the order while filtering', async () => {
    await page.goto('/admin/data/deals');
    await page.getByLabel('Order').selectOption('name');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/sort=name/);
    expect(await names()).toEqual(['Forty seats', 'Mainframe upgrade', 'Pilot']);
    await page.getByLabel('Stage').selectOption('proposal');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/stage=proposal/);
    expect(await names()).toEqual(['Mainframe upgrade']);
    expect(await page.getByLabel('Order').inputValue()).toBe('name');
  });

  it('creates a deal with the API\'s amount message next to the field', async () => {
    await page.goto('/admin/data/deals/new');
    await page.getByLabel('Name', { exact: true }).fill('Exact amounts');
    await page.getByLabel('Amount').fill('12.34567');
    await page.getByLabel('Currency').fill('EUR');
    await page.getByRole('button', { name: 'Create deal' }).click();
    expect(await fieldErrorOf(page, 'Amount')).toBe('Error: Amount must have at most 4 decimals');
    await page.getByLabel('Amount').fill('12.3456');
    await page.getByLabel('Expected close date').fill('2026-06-30');
    await page.getByRole('button', { name: 'Create deal' }).click();
    await page.waitForURL(/notice=created/);
    expect(await page.locator('.details').textContent()).toContain('12.3456 EUR');
    expect(await page.locator('.details').textContent()).toContain('30 Jun 2026');
  });
});

describe('notes', () => {
  it('shows a note\'s markdown as typed, line breaks included', async () => {
    const account = (await api('/accounts', { name: 'Noted Account' })).data.account;
    await page.goto(`/admin/data/accounts/${account.id}`);
    await page.getByLabel('Add note').fill('# Call\n- said yes\n- send the offer');
    await page.getByRole('button', { name: 'Add note' }).click();
    await page.waitForURL(/#history$/);
    expect(await page.locator('.note-body').innerText()).toBe('# Call\n- said yes\n- send the offer');
  });
});

describe('my tasks', () => {
  it('shows the overdue ones, then the done ones, with the status and due controls', async () => {
    for (const body of [{ title: 'Long overdue', dueDate: '2020-01-01' }, { title: 'Far ahead', dueDate: '2099-01-01' }, { title: 'Already done', status: 'done' }]) {
      await api('/tasks', { ...body, assigneeId: userId });
    }
    const titles = () => page.locator('tbody td:first-child').allTextContents();
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'My tasks' }).click();
    expect((await titles()).sort()).toEqual(['Far ahead', 'Long overdue']);
    await page.getByLabel('Due', { exact: true }).selectOption('overdue');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/due=overdue/);
    expect(await titles()).toEqual(['Long overdue']);
    await page.getByLabel('Due', { exact: true }).selectOption('');
    await page.getByLabel('Status').selectOption('done');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/status=done/);
    expect(await titles()).toEqual(['Already done']);
  });
});
