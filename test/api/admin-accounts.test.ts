import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../../src/modules/events/outbox.store.js';
import type { TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';
import { addConsoleUser, fieldError, get, openConsole, signIn, submit, type ConsoleSession } from '../helpers/admin.js';

let t: TestApp;
let a: Seeded;
let s: ConsoleSession;

beforeAll(async () => {
  ({ t, a, s } = await openConsole({ name: 'Clara Console' }));
});
afterAll(() => t?.close());

const idFrom = (location: string | undefined) => /\/admin\/data\/accounts\/([0-9a-f]{24})/.exec(location ?? '')![1]!;
const rows = (body: string) => [...body.matchAll(/<td><a href="\/admin\/data\/accounts\/[0-9a-f]{24}">(.*?)<\/a><\/td>/g)].map((m) => m[1]);

describe('account forms', () => {
  it('creates an account with the console user as actor, and shows it with its deals', async () => {
    const res = await submit(t.app, s, '/admin/data/accounts', { name: 'Analytical Engines', domain: 'Analytical.Example', email: ' Hello@Analytical.example ', phoneNumber: '+44 20 7946 0958', industry: '', website: 'https://analytical.example', ownerId: s.userId });
    expect(res.status, res.body).toBe(303);
    const id = idFrom(res.location);
    const account = (await call(t.app, 'GET', `/accounts/${id}`, { auth: a.auth })).body.data.account;
    expect(account).toMatchObject({ name: 'Analytical Engines', domain: 'analytical.example', email: 'hello@analytical.example', phoneNumber: '+442079460958', industry: null, ownerId: s.userId });
    const [event] = await listEvents(t.ctx.database.db, a.orgId, { objectId: id });
    expect(event!.data.actor).toEqual({ type: 'USER', id: s.userId, channel: 'UI' });
    await call(t.app, 'POST', '/deals', { auth: a.auth, body: { name: 'Forty seats', accountId: id, amount: '48000.00', currency: 'EUR' } });
    const detail = await get(t.app, res.location!, s.cookie);
    expect(detail.body).toContain('Account created.');
    expect(detail.body).toContain('Clara Console');
    expect(detail.body).toMatch(/<a href="\/admin\/data\/deals\/[0-9a-f]{24}">Forty seats<\/a><\/td><td>Qualification<\/td><td class="num">48,000.00 EUR<\/td>/);
    expect(detail.body).toContain(`href="/admin/data/deals/new?accountId=${id}"`);
    expect(detail.body).toContain('Account created</span> <span class="muted">in the console');
    expect((await get(t.app, '/admin', s.cookie)).body).toContain(`<a href="/admin/data/accounts/${id}">Account created</a>`);
  });

  it('shows the API\'s messages next to each bad field and keeps what was typed', async () => {
    const res = await submit(t.app, s, '/admin/data/accounts', { name: ' ', domain: 'not a domain', email: 'nope', phoneNumber: '12', website: 'ftp://x.example', industry: 'Kept' });
    expect(res.status).toBe(400);
    expect(fieldError(res.body, 'name')).toBe('Error: Name must not be blank');
    expect(fieldError(res.body, 'domain')).toBe('Error: Domain has an invalid format');
    expect(fieldError(res.body, 'email')).toBe('Error: E-mail must be a valid e-mail address');
    expect(fieldError(res.body, 'phoneNumber')).toContain('country code');
    expect(fieldError(res.body, 'website')).toBe('Error: Website has an invalid format');
    expect(res.body).toContain('value="Kept"');
    const other = await seedOrg(t.ctx);
    const owner = await submit(t.app, s, '/admin/data/accounts', { name: 'X', ownerId: other.userId });
    expect(fieldError(owner.body, 'ownerId')).toBe('Error: Owner is not an active user of this organization');
  });

  it('edits an account: blank inputs clear fields; only changes are recorded', async () => {
    const id = idFrom((await submit(t.app, s, '/admin/data/accounts', { name: 'Editable', industry: 'Looms' })).location);
    expect((await get(t.app, `/admin/data/accounts/${id}/edit`, s.cookie)).body).toContain('value="Looms"');
    const bad = await submit(t.app, s, `/admin/data/accounts/${id}`, { name: 'Editable', email: 'bad' });
    expect(fieldError(bad.body, 'email')).toBe('Error: E-mail must be a valid e-mail address');
    const ok = await submit(t.app, s, `/admin/data/accounts/${id}`, { name: 'Edited', industry: '' });
    expect(ok.status).toBe(303);
    expect((await call(t.app, 'GET', `/accounts/${id}`, { auth: a.auth })).body.data.account).toMatchObject({ name: 'Edited', industry: null });
    const events = await listEvents(t.ctx.database.db, a.orgId, { objectId: id });
    expect(events[1]!.data.changes).toEqual({ before: { name: 'Editable', industry: 'Looms' }, after: { name: 'Edited', industry: null } });
  });
});

describe('account table', () => {
  it('searches with the API\'s q semantics and paginates', async () => {
    const org = await seedOrg(t.ctx);
    const viewer = await signIn(t.app, await addConsoleUser(t.ctx, org.orgId));
    for (let i = 1; i <= 27; i++) {
      await call(t.app, 'POST', '/accounts', { auth: org.auth, body: { name: `Company ${String(i).padStart(2, '0')}`, email: `c${i}@example.com`, phoneNumber: `+1415555${String(1000 + i)}` } });
    }
    const first = await get(t.app, '/admin/data/accounts', viewer.cookie);
    expect(first.body).toContain('Showing 1–25 of 27');
    expect(rows(first.body)[0]).toBe('Company 27');
    expect((await get(t.app, '/admin/data/accounts?page=2', viewer.cookie)).body).toContain('Showing 26–27 of 27');
    expect(rows((await get(t.app, '/admin/data/accounts?q=C7%40EXAMPLE.com', viewer.cookie)).body)).toEqual(['Company 07']);
    expect(rows((await get(t.app, '/admin/data/accounts?q=%2B1+415-555-1012', viewer.cookie)).body)).toEqual(['Company 12']);
    expect(rows((await get(t.app, '/admin/data/accounts?q=pany+2', viewer.cookie)).body)).toHaveLength(8);
    const tooLong = await get(t.app, `/admin/data/accounts?q=${'x'.repeat(201)}`, viewer.cookie);
    expect(tooLong.status).toBe(400);
    expect(fieldError(tooLong.body, 'q')).toBe('Error: Search accounts must be at most 200 characters');
  });
});

describe('custom account fields in the console', () => {
  it('the forms, the detail page and the table carry them: tier (select) and renewalDate (date)', async () => {
    const org = await seedOrg(t.ctx);
    const viewer = await signIn(t.app, await addConsoleUser(t.ctx, org.orgId));
    const fields = [{ key: 'tier', label: 'Tier', type: 'select', options: ['gold', 'silver'] }, { key: 'renewalDate', label: 'Renewal date', type: 'date' }];
    expect((await call(t.app, 'PATCH', '/objects/accounts', { auth: org.auth, body: { fields } })).status).toBe(200);
    const form = await get(t.app, '/admin/data/accounts/new', viewer.cookie);
    expect(form.body).toMatch(/<select[^>]*name="tier"/);
    expect(form.body).toMatch(/type="date"[^>]*name="renewalDate"|name="renewalDate"[^>]*type="date"/);
    const bad = await submit(t.app, viewer, '/admin/data/accounts', { name: 'Bad', tier: 'bronze' });
    expect(bad.status).toBe(400);
    expect(fieldError(bad.body, 'tier')).toContain('Tier');
    const res = await submit(t.app, viewer, '/admin/data/accounts', { name: 'Custom Engines', tier: 'gold', renewalDate: '2027-01-31' });
    expect(res.status, res.body).toBe(303);
    const id = idFrom(res.location);
    expect((await call(t.app, 'GET', `/accounts/${id}`, { auth: org.auth })).body.data.account).toMatchObject({ tier: 'gold', renewalDate: '2027-01-31T00:00:00.000Z' });
    const detail = await get(t.app, `/admin/data/accounts/${id}`, viewer.cookie);
    expect(detail.body).toContain('<dt>Renewal date</dt><dd><time datetime="2027-01-31">31 Jan 2027</time></dd>');
    expect((await get(t.app, `/admin/data/accounts/${id}/edit`, viewer.cookie)).body).toContain('value="2027-01-31"');
    const edited = await submit(t.app, viewer, `/admin/data/accounts/${id}`, { name: 'Custom Engines', tier: 'gold', renewalDate: '' });
    expect(edited.status, edited.body).toBe(303);
    expect((await call(t.app, 'GET', `/accounts/${id}`, { auth: org.auth })).body.data.account).toMatchObject({ tier: 'gold', renewalDate: null });
    const table = await get(t.app, '/admin/data/accounts', viewer.cookie);
    expect(table.body).toContain('<th scope="col">Tier</th>');
    expect(table.body).toMatch(/<td>gold<\/td>/);
  });

  it('a bad website and a missing required custom field are refused together', async () => {
    const org = await seedOrg(t.ctx);
    const viewer = await signIn(t.app, await addConsoleUser(t.ctx, org.orgId));
    expect((await call(t.app, 'PATCH', '/objects/accounts', { auth: org.auth, body: { fields: [{ key: 'region', label: 'Region', type: 'text', required: true }] } })).status).toBe(200);
    const res = await submit(t.app, viewer, '/admin/data/accounts', { name: 'Two problems', website: 'not a url', region: '' });
    expect(res.status).toBe(400);
    expect(fieldError(res.body, 'website')).toContain('Website');
    expect(fieldError(res.body, 'region')).toBe('Error: Region is required');
  });
});
