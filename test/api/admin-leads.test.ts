import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../../src/modules/events/outbox.store.js';
import type { TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';
import { addConsoleUser, checkedValues, fieldError, get, openConsole, signIn, submit, type ConsoleSession } from '../helpers/admin.js';

let t: TestApp;
let a: Seeded;
let s: ConsoleSession;

beforeAll(async () => {
  ({ t, a, s } = await openConsole({ name: 'Clara Console' }));
});
afterAll(() => t?.close());

const idFrom = (location: string | undefined) => /\/admin\/data\/leads\/([0-9a-f]{24})/.exec(location ?? '')![1]!;

describe('lead forms', () => {
  it('creates a lead; the event names the console user as actor', async () => {
    const res = await submit(t.app, s, '/admin/data/leads', { name: 'Ada Lovelace', email: ' Ada@Example.com ', phoneNumber: '+44 20 7946 0958', status: 'QUALIFIED', source: 'REFERRAL', company: '', notes: '' });
    expect(res.status).toBe(303);
    const id = idFrom(res.location);
    const lead = (await call(t.app, 'GET', `/leads/${id}`, { auth: a.auth })).body.data.lead;
    expect(lead).toMatchObject({ name: 'Ada Lovelace', email: 'ada@example.com', phoneNumber: '+442079460958', status: 'QUALIFIED', source: 'REFERRAL', company: null, notes: null });
    const [event] = await listEvents(t.ctx.database.db, a.orgId, { objectId: id });
    expect(event!.data.actor).toEqual({ type: 'USER', id: s.userId, channel: 'UI' });
    const detail = await get(t.app, res.location!, s.cookie);
    expect(detail.body).toContain('Lead created.');
    expect(detail.body).toContain('+442079460958');
    expect(detail.body).toContain('Lead created</span> <span class="muted">in the console');
    const dashboard = await get(t.app, '/admin', s.cookie);
    expect(dashboard.body).toContain(`<a href="/admin/data/leads/${id}">Lead created</a>`);
  });

  it('shows the API\'s validation messages next to each bad field and keeps what was typed', async () => {
    const res = await submit(t.app, s, '/admin/data/leads', { name: '', email: 'not-an-email', phoneNumber: '4155550100', status: 'NEW', company: 'Kept Co' });
    expect(res.status).toBe(400);
    expect(fieldError(res.body, 'name')).toBe('Error: Name must not be empty');
    expect(fieldError(res.body, 'email')).toBe('Error: E-mail must be a valid e-mail address');
    expect(fieldError(res.body, 'phoneNumber')).toContain('country code');
    expect(res.body).toMatch(/id="f-email"[^>]*aria-invalid="true"/);
    expect(res.body).toContain('value="Kept Co"');
    expect(res.body).toContain('<h2>There is a problem</h2>');
    expect(res.body).toContain('href="#f-phoneNumber"');
  });

  it('reports an owner from another organization through the service rules', async () => {
    const other = await seedOrg(t.ctx);
    const res = await submit(t.app, s, '/admin/data/leads', { name: 'X', status: 'NEW', ownerId: other.userId });
    expect(fieldError(res.body, 'ownerId')).toBe('Error: Owner is not an active user of this organization');
  });

  it('edits a lead: blank inputs clear fields, and only changes are recorded', async () => {
    const id = idFrom((await submit(t.app, s, '/admin/data/leads', { name: 'Editable', company: 'Old Co', status: 'NEW' })).location);
    const form = await get(t.app, `/admin/data/leads/${id}/edit`, s.cookie);
    expect(form.body).toContain('value="Old Co"');
    const bad = await submit(t.app, s, `/admin/data/leads/${id}`, { name: 'Editable', phoneNumber: '12', status: 'NEW' });
    expect(bad.status).toBe(400);
    expect(fieldError(bad.body, 'phoneNumber')).toContain('country code');
    const ok = await submit(t.app, s, `/admin/data/leads/${id}`, { name: 'Edited', company: '', status: 'CONTACTED' });
    expect(ok.status).toBe(303);
    const lead = (await call(t.app, 'GET', `/leads/${id}`, { auth: a.auth })).body.data.lead;
    expect(lead).toMatchObject({ name: 'Edited', company: null, status: 'CONTACTED' });
    const events = await listEvents(t.ctx.database.db, a.orgId, { objectId: id });
    expect(events[1]!.data.changes).toEqual({ before: { name: 'Editable', status: 'NEW', company: 'Old Co' }, after: { name: 'Edited', status: 'CONTACTED', company: null } });
  });

  it('escapes whatever a lead contains', async () => {
    const res = await call(t.app, 'POST', '/leads', { auth: a.auth, body: { name: '<script>alert(1)</script>', company: '"><img src=x onerror=alert(2)>' } });
    const id = res.body.data.lead.id;
    for (const page of ['/admin/data/leads', `/admin/data/leads/${id}`, `/admin/data/leads/${id}/edit`, '/admin']) {
      const body = (await get(t.app, page, s.cookie)).body;
      expect(body, page).not.toContain('<script>alert(1)');
      expect(body, page).not.toContain('<img src=x');
      expect(body, page).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    }
  });
});

describe('lead table', () => {
  it('searches with the API\'s q semantics and paginates', async () => {
    const org = await seedOrg(t.ctx);
    const viewer = await signIn(t.app, await addConsoleUser(t.ctx, org.orgId));
    for (let i = 1; i <= 30; i++) {
      await call(t.app, 'POST', '/leads', { auth: org.auth, body: { name: `Person ${String(i).padStart(2, '0')}`, email: `p${i}@example.com`, phoneNumber: `+1415555${String(1000 + i)}` } });
    }
    const first = await get(t.app, '/admin/data/leads', viewer.cookie);
    expect(first.body).toContain('Showing 1–25 of 30');
    expect(first.body).toContain('Person 30');
    expect(first.body).not.toContain('Person 05');
    expect(first.body).toContain('href="/admin/data/leads?page=2"');
    const second = await get(t.app, '/admin/data/leads?page=2', viewer.cookie);
    expect(second.body).toContain('Showing 26–30 of 30');
    expect(second.body).toContain('Person 05');
    const rows = (body: string) => [...body.matchAll(/<td><a href="\/admin\/data\/leads\/[0-9a-f]{24}">(.*?)<\/a><\/td>/g)].map((m) => m[1]);
    expect(rows((await get(t.app, '/admin/data/leads?q=P7%40EXAMPLE.com', viewer.cookie)).body)).toEqual(['Person 07']);
    expect(rows((await get(t.app, '/admin/data/leads?q=%2B1+415-555-1012', viewer.cookie)).body)).toEqual(['Person 12']);
    expect(rows((await get(t.app, '/admin/data/leads?q=son+2', viewer.cookie)).body)).toHaveLength(10);
    const searched = await get(t.app, '/admin/data/leads?q=son&page=2', viewer.cookie);
    expect(searched.body).toContain('href="/admin/data/leads?q=son&amp;page=1"');
    const tooLong = await get(t.app, `/admin/data/leads?q=${'x'.repeat(201)}`, viewer.cookie);
    expect(tooLong.status).toBe(400);
    expect(fieldError(tooLong.body, 'q')).toBe('Error: Search leads must be at most 200 characters');
  });
});

describe('custom lead fields in the console', () => {
  it('the forms, the detail page and the table carry them: linkedinUrl (url) and visitDate (date)', async () => {
    const org = await seedOrg(t.ctx);
    const viewer = await signIn(t.app, await addConsoleUser(t.ctx, org.orgId));
    const fields = [{ key: 'linkedinUrl', label: 'LinkedIn URL', type: 'url' }, { key: 'visitDate', label: 'Visit date', type: 'date' }];
    expect((await call(t.app, 'PATCH', '/objects/leads', { auth: org.auth, body: { fields } })).status).toBe(200);
    const form = await get(t.app, '/admin/data/leads/new', viewer.cookie);
    expect(form.body).toMatch(/name="linkedinUrl"/);
    expect(form.body).toMatch(/type="date"[^>]*name="visitDate"|name="visitDate"[^>]*type="date"/);
    const bad = await submit(t.app, viewer, '/admin/data/leads', { name: 'Bad', status: 'NEW', linkedinUrl: 'not a url' });
    expect(bad.status).toBe(400);
    expect(fieldError(bad.body, 'linkedinUrl')).toContain('LinkedIn URL');
    const res = await submit(t.app, viewer, '/admin/data/leads', { name: 'Custom Ada', status: 'NEW', linkedinUrl: 'https://www.linkedin.com/in/ada', visitDate: '2026-03-04' });
    expect(res.status).toBe(303);
    const id = idFrom(res.location);
    expect((await call(t.app, 'GET', `/leads/${id}`, { auth: org.auth })).body.data.lead).toMatchObject({ linkedinUrl: 'https://www.linkedin.com/in/ada', visitDate: '2026-03-04T00:00:00.000Z' });
    const detail = await get(t.app, `/admin/data/leads/${id}`, viewer.cookie);
    expect(detail.body).toContain('Visit date');
    expect(detail.body).toContain('href="https://www.linkedin.com/in/ada"');
    expect((await get(t.app, `/admin/data/leads/${id}/edit`, viewer.cookie)).body).toContain('value="2026-03-04"');
    const edited = await submit(t.app, viewer, `/admin/data/leads/${id}`, { name: 'Custom Ada', status: 'NEW', linkedinUrl: 'https://www.linkedin.com/in/ada', visitDate: '' });
    expect(edited.status).toBe(303);
    expect((await call(t.app, 'GET', `/leads/${id}`, { auth: org.auth })).body.data.lead.visitDate).toBeNull();
    const table = await get(t.app, '/admin/data/leads', viewer.cookie);
    expect(table.body).toContain('<th scope="col">LinkedIn URL</th>');
  });
  it('a multi_select is a group of checkboxes whose checked options are all sent; a relation takes a pasted id', async () => {
    const org = await seedOrg(t.ctx);
    const viewer = await signIn(t.app, await addConsoleUser(t.ctx, org.orgId));
    const fields = [{ key: 'channels', label: 'Channels', type: 'multi_select', options: ['email', 'phone', 'fax'] }, { key: 'partner', label: 'Partner', type: 'relation', target: 'accounts' }];
    expect((await call(t.app, 'PATCH', '/objects/leads', { auth: org.auth, body: { fields } })).status).toBe(200);
    const account = (await call(t.app, 'POST', '/accounts', { auth: org.auth, body: { name: 'Partner Co' } })).body.data.account;
    expect((await get(t.app, '/admin/data/leads/new', viewer.cookie)).body).toMatch(/type="checkbox"[^>]*name="channels"/);
    const res = await submit(t.app, viewer, '/admin/data/leads', { name: 'Multi', status: 'NEW', channels: ['email', 'fax'], partner: account.id });
    expect(res.status, res.body).toBe(303);
    expect((await call(t.app, 'GET', `/leads/${idFrom(res.location)}`, { auth: org.auth })).body.data.lead).toMatchObject({ channels: ['email', 'fax'], partner: account.id });
    const dangling = await submit(t.app, viewer, '/admin/data/leads', { name: 'Dangling', status: 'NEW', partner: '0123456789abcdef01234567' });
    expect(dangling.status).toBe(400);
    expect(fieldError(dangling.body, 'partner')).toContain('Partner');
  });

  it('a multi_select option holding `;`, `,` or quotes round-trips: ticked on the edit page, kept by an unrelated edit, accepted on create', async () => {
    const org = await seedOrg(t.ctx);
    const viewer = await signIn(t.app, await addConsoleUser(t.ctx, org.orgId));
    const options = ['email', 'Sales; Marketing', 'a,b', '["x"] & \'y\''];
    expect((await call(t.app, 'PATCH', '/objects/leads', { auth: org.auth, body: { fields: [{ key: 'channels', label: 'Channels', type: 'multi_select', options }] } })).status).toBe(200);
    const held = ['Sales; Marketing', 'a,b', '["x"] & \'y\''];
    const lead = (await call(t.app, 'POST', '/leads', { auth: org.auth, body: { name: 'Semi', channels: held } })).body.data.lead;
    const edit = await get(t.app, `/admin/data/leads/${lead.id}/edit`, viewer.cookie);
    expect(checkedValues(edit.body, 'channels')).toEqual(held);
    const saved = await submit(t.app, viewer, `/admin/data/leads/${lead.id}`, { name: 'Semi', status: 'NEW', company: 'Changed Co', channels: checkedValues(edit.body, 'channels') });
    expect(saved.status, saved.body).toBe(303);
    expect((await call(t.app, 'GET', `/leads/${lead.id}`, { auth: org.auth })).body.data.lead).toMatchObject({ company: 'Changed Co', channels: held });
    const created = await submit(t.app, viewer, '/admin/data/leads', { name: 'Semi 2', status: 'NEW', channels: ['Sales; Marketing'] });
    expect(created.status, created.body).toBe(303);
    expect((await call(t.app, 'GET', `/leads/${idFrom(created.location)}`, { auth: org.auth })).body.data.lead.channels).toEqual(['Sales; Marketing']);
  });
});

describe('errors of one submit', () => {
  it('an empty name and bad custom values are all shown at once, as the API reports them in one 400', async () => {
    const org = await seedOrg(t.ctx);
    const viewer = await signIn(t.app, await addConsoleUser(t.ctx, org.orgId));
    const fields = [{ key: 'score', label: 'Score', type: 'number' }, { key: 'altEmail', label: 'Alt e-mail', type: 'email' }, { key: 'site', label: 'Site', type: 'url' }];
    expect((await call(t.app, 'PATCH', '/objects/leads', { auth: org.auth, body: { fields } })).status).toBe(200);
    const lead = (await call(t.app, 'POST', '/leads', { auth: org.auth, body: { name: 'Whole' } })).body.data.lead;
    const res = await submit(t.app, viewer, `/admin/data/leads/${lead.id}`, { name: '', status: 'NEW', score: 'abc', altEmail: 'bad-email', site: 'notaurl' });
    expect(res.status).toBe(400);
    for (const field of ['name', 'score', 'altEmail', 'site']) expect(fieldError(res.body, field), field).toBeDefined();
    expect(fieldError(res.body, 'score')).toBe('Error: Score must be a number');
  });
});

describe('custom lead fields on the Objects configuration page', () => {
  it('an administrator adds a field to leads there; the standard fields are shown, not edited', async () => {
    const admin = await signIn(t.app, await addConsoleUser(t.ctx, a.orgId, { admin: true }));
    const page = await get(t.app, '/admin/config/objects/leads/definition', admin.cookie);
    expect(page.status).toBe(200);
    expect(page.body).not.toMatch(/name="fields\.\d+\.key"[^>]*value="email"/);
    const res = await submit(t.app, admin, '/admin/config/objects/leads/definition', { name: 'Leads', 'fields.0.key': 'budgetCode', 'fields.0.label': 'Budget code', 'fields.0.type': 'text' });
    expect(res.status, res.body).toBe(303);
    const leads = (await call(t.app, 'GET', '/objects/leads', { auth: a.auth })).body.data.object;
    expect(leads.fields.filter((f: { readOnly?: boolean }) => !f.readOnly).map((f: { key: string }) => f.key)).toEqual(['budgetCode']);
  });
});
