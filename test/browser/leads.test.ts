import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../../src/modules/events/outbox.store.js';
import { addConsoleUser } from '../helpers/admin.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { fieldErrorOf, signInAs, startLiveConsole, type LiveConsole } from '../helpers/browser.js';

let live: LiveConsole;
let org: Seeded;

beforeAll(async () => {
  live = await startLiveConsole();
  org = await seedOrg(live.t.ctx);
  for (const [name, email] of [['Marie Curie', 'marie@radium.example'], ['Pierre Curie', 'pierre@radium.example'], ['Alan Turing', 'alan@bletchley.example']]) {
    await fetch(`${live.baseUrl}/api/public/v1/leads`, { method: 'POST', headers: { authorization: `Bearer ${org.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ name, email }) });
  }
});
afterAll(() => live?.close());

afterEach(() => live.expectCleanPages());

const names = (page: import('playwright-core').Page) => page.locator('tbody td:first-child a').allTextContents();

describe('leads', () => {
  it('searches by name substring and exact e-mail, like the API', async () => {
    const user = await addConsoleUser(live.t.ctx, org.orgId);
    const { page } = await live.newPage();
    await signInAs(page, user.email, user.password);
    await page.getByRole('link', { name: 'Leads' }).first().click();
    expect(await names(page)).toEqual(['Alan Turing', 'Pierre Curie', 'Marie Curie']);
    const search = page.getByRole('searchbox', { name: 'Search leads' });
    await search.fill('curie');
    await search.press('Enter');
    await page.waitForURL((url) => url.pathname === '/admin/data/leads' && url.searchParams.get('q') === 'curie');
    expect(await names(page)).toEqual(['Pierre Curie', 'Marie Curie']);
    await page.getByRole('searchbox', { name: 'Search leads' }).fill('MARIE@radium.example');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/q=MARIE/);
    expect(await names(page)).toEqual(['Marie Curie']);
    await page.getByRole('link', { name: 'Clear' }).click();
    expect(await names(page)).toHaveLength(3);
  });

  it('creates a lead after showing the validation error next to the field, then edits it', async () => {
    const user = await addConsoleUser(live.t.ctx, org.orgId);
    const { page } = await live.newPage();
    await signInAs(page, user.email, user.password);
    await page.goto('/admin/data/leads');
    await page.getByRole('link', { name: 'New lead' }).click();
    await page.getByLabel('Name').fill('Ada Lovelace');
    await page.getByLabel('E-mail').fill('ada@engines.example');
    await page.getByLabel('Phone number').fill('020 7946 0958');
    await page.getByLabel('Status').selectOption('CONTACTED');
    await page.getByRole('button', { name: 'Create lead' }).click();

    expect(await fieldErrorOf(page, 'Phone number')).toContain('Phone number must be a valid phone number in international format with the country code');
    expect(await page.locator(':focus').getAttribute('class')).toBe('error-summary');
    expect(await page.getByLabel('E-mail').inputValue()).toBe('ada@engines.example');
    expect(await page.getByLabel('Status').inputValue()).toBe('CONTACTED');
    await page.getByRole('alert').getByRole('link', { name: /Phone number/ }).click();
    await page.getByLabel('Phone number').fill('+44 20 7946 0958');
    await page.getByRole('button', { name: 'Create lead' }).click();
    await page.waitForURL(/\/admin\/data\/leads\/[0-9a-f]{24}\?notice=created/);
    expect(await page.locator('h1').textContent()).toBe('Ada Lovelace');
    expect(await page.locator('.details').textContent()).toContain('+442079460958');

    await page.getByRole('link', { name: 'Edit lead' }).click();
    await page.getByLabel('Company').fill('Analytical Engines');
    await page.getByLabel('E-mail').fill('not an e-mail');
    await page.getByRole('button', { name: 'Save changes' }).click();
    expect(await fieldErrorOf(page, 'E-mail')).toBe('Error: E-mail must be a valid e-mail address');
    await page.getByLabel('E-mail').fill('ada@engines.example');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.waitForURL(/notice=saved/);
    expect(await page.getByRole('status').textContent()).toBe('Changes saved.');
    expect(await page.locator('.details').textContent()).toContain('Analytical Engines');
    const id = new URL(page.url()).pathname.split('/').pop()!;
    const events = await listEvents(live.t.ctx.database.db, org.orgId, { objectId: id });
    expect(events.map((e) => [e.type, e.data.actor])).toEqual([
      ['lead.created', { type: 'USER', id: user.id, channel: 'UI' }],
      ['lead.updated', { type: 'USER', id: user.id, channel: 'UI' }],
    ]);
  });
});
