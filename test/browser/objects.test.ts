import type { Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { addConsoleUser } from '../helpers/admin.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { fieldErrorOf, signInAs, startLiveConsole, type LiveConsole } from '../helpers/browser.js';

let live: LiveConsole;
let org: Seeded;
let page: Page;

const api = (method: string, path: string, body?: unknown) =>
  fetch(`${live.baseUrl}/api/public/v1${path}`, { method, headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) }).then((r) => r.json() as Promise<any>);

beforeAll(async () => {
  live = await startLiveConsole();
  org = await seedOrg(live.t.ctx, { timezone: 'UTC' });
  await api('POST', '/deals', { name: 'Stuck in negotiation', stage: 'negotiation' });
  const admin = await addConsoleUser(live.t.ctx, org.orgId, { admin: true });
  ({ page } = await live.newPage());
  await signInAs(page, admin.email, admin.password);
});
afterAll(() => live?.close());
afterEach(() => live.expectCleanPages());

const row = (legend: string) => page.getByRole('group', { name: legend, exact: true });

describe('deal stages', () => {
  it('reorders and saves the stages; removing one that deals are in is refused in place', async () => {
    await page.getByRole('link', { name: 'Deal stages' }).click();
    await row('Stage 3').getByRole('button', { name: 'Move Negotiation up' }).click();
    expect(await row('Stage 2').getByLabel('Key').inputValue()).toBe('negotiation');
    await row('Stage 2').getByLabel('Key').fill('');
    await row('Stage 2').getByLabel('Label').fill('');
    await page.getByRole('button', { name: 'Save stages' }).click();
    expect(await page.getByRole('alert').textContent()).toContain('Can\'t remove stages still used by deals: negotiation (1 deal).');
    expect(await page.locator('#f-stages-error').textContent()).toContain('stage negotiation is still used by 1 deal');

    await row('Stage 2').getByLabel('Key').fill('negotiation');
    await row('Stage 2').getByLabel('Label').fill('Negotiating');
    await row('Stage 6').getByLabel('Key').fill('on_hold');
    await row('Stage 6').getByLabel('Label').fill('On hold');
    await page.getByRole('button', { name: 'Save stages' }).click();
    await page.waitForURL(/notice=saved/);
    const stages = (await api('GET', '/deal-stages')).data.stages.map((s: { key: string }) => s.key);
    expect(stages).toEqual(['qualification', 'negotiation', 'proposal', 'won', 'lost', 'on_hold']);
  });
});

describe('custom objects', () => {
  it('defines an object row by row, then creates a record after a validation error shown next to its field', async () => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Custom objects' }).click();
    await page.getByRole('link', { name: 'Define an object' }).click();
    await page.getByLabel('Slug').fill('projects');
    await page.getByLabel('Name', { exact: true }).fill('Projects');
    const fields: [string, string, string, string?][] = [['title', 'Title', 'text'], ['priority', 'Priority', 'select', 'low\nhigh'], ['due_on', 'Due on', 'date']];
    for (const [i, [key, label, type, options]] of fields.entries()) {
      const r = row(`Field ${i + 1}`);
      await r.getByLabel('Key').fill(key);
      await r.getByLabel('Label').fill(label);
      await r.getByLabel('Type').selectOption(type);
      if (options) await r.getByLabel('Options').fill(options);
    }
    await row('Field 1').getByLabel('Required').check();
    await row('Field 3').getByLabel('Due date').check();
    await page.getByRole('button', { name: 'Add more field rows' }).click();
    expect(await row('Field 1').getByLabel('Key').inputValue()).toBe('title');
    const fourth = row('Field 4');
    await fourth.getByLabel('Key').fill('budget');
    await fourth.getByLabel('Label').fill('Budget');
    await fourth.getByLabel('Type').selectOption('number');
    await row('Stage 1').getByLabel('Key').fill('planned');
    await row('Stage 1').getByLabel('Label').fill('Planned');
    await row('Stage 2').getByLabel('Key').fill('done');
    await row('Stage 2').getByLabel('Label').fill('Done');
    await page.getByRole('button', { name: 'Create object' }).click();
    await page.waitForURL('**/admin/config/objects/projects/definition?notice=created');
    expect(await page.getByRole('table', { name: 'Fields of Projects' }).locator('tbody tr').count()).toBe(4);

    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Projects' }).click();
    await page.getByRole('link', { name: 'New record' }).click();
    await page.getByLabel('Priority').selectOption('high');
    await page.getByLabel('Budget').fill('a lot');
    await page.getByLabel('Due on').fill('2020-01-15');
    await page.getByRole('button', { name: 'Create Projects record' }).click();
    expect(await fieldErrorOf(page, 'Title')).toBe('Error: Title is required');
    expect(await fieldErrorOf(page, 'Budget')).toBe('Error: Budget must be a number');
    expect(await page.locator(':focus').getAttribute('class')).toBe('error-summary');
    expect(await page.getByLabel('Priority').inputValue()).toBe('high');
    await page.getByLabel('Title').fill('Website relaunch');
    await page.getByLabel('Budget').fill('2500');
    await page.getByRole('button', { name: 'Create Projects record' }).click();
    await page.waitForURL(/notice=created/);
    expect(await page.locator('h1').textContent()).toBe('Website relaunch');

    await page.getByRole('link', { name: 'Projects' }).first().click();
    await page.getByLabel('Overdue only').check();
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.waitForURL(/overdue=true/);
    expect(await page.locator('tbody tr').count()).toBe(1);
    expect(await page.locator('tbody').textContent()).toContain('Overdue');
  });
});
