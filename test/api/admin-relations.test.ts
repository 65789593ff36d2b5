import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/test-app.js';
import type { Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';
import { fieldError, get, openConsole, submit, type ConsoleSession } from '../helpers/admin.js';

/*
 * The console shows related items on both sides (contract §9): relation fields get a picker and read as links
 * named after their item; an account page lists its leads, deals and the records pointing at it; a lead page its
 * deals and records; a record page the records pointing at it. Multi-selects are checkboxes. The lead form has
 * an account picker.
 */

let t: TestApp;
let a: Seeded;
let s: ConsoleSession;
let accountId: string;
let leadId: string;

const api = async (method: 'POST' | 'PATCH', path: string, body: unknown) => {
  const res = await call(t.app, method, path, { auth: a.auth, body });
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  return res.body.data;
};

beforeAll(async () => {
  ({ t, a, s } = await openConsole({ admin: true, name: 'Rhea Relations' }));
  accountId = (await api('POST', '/accounts', { name: 'Acme Corp' })).account.id;
  leadId = (await api('POST', '/leads', { name: 'Ada Lead', accountId })).lead.id;
  await api('POST', '/deals', { name: 'Acme renewal', accountId, leadId });
  await api('POST', '/objects', {
    slug: 'visits',
    name: 'Visits',
    fields: [
      { key: 'title', label: 'Title', type: 'text', required: true },
      { key: 'customer', label: 'Customer', type: 'relation', target: 'accounts' },
      { key: 'contact', label: 'Contact', type: 'relation', target: 'leads' },
      { key: 'follows', label: 'Follows', type: 'relation', target: 'visits' },
      { key: 'tags', label: 'Tags', type: 'multi_select', options: ['onsite', 'remote', 'paid'] },
    ],
  });
});
afterAll(() => t.close());

describe('record forms', () => {
  it('offer the target\'s newest items in a picker and the options as checkboxes, and save both', async () => {
    const form = await get(t.app, '/admin/data/objects/visits/new', s.cookie);
    expect(form.status).toBe(200);
    expect(form.body).toContain(`<option value="${accountId}" label="Acme Corp">`);
    expect(form.body).toContain(`<option value="${leadId}" label="Ada Lead">`);
    expect(form.body).toMatch(/type="checkbox"[^>]*name="tags" value="remote"/);
    expect(form.body).toContain('Pick one of the newest accounts or paste an id.');
    expect(form.body).toContain('Pick one of the newest records of visits or paste an id.');
    const created = await submit(t.app, s, '/admin/data/objects/visits', { title: 'Kick-off', customer: accountId, contact: leadId, tags: ['paid', 'onsite'] });
    expect(created.status).toBe(303);
    const id = String(created.headers.location).split('/').pop()!.split('?')[0]!;
    const record = (await call(t.app, 'GET', `/objects/visits/records/${id}`, { auth: a.auth })).body.data.record;
    expect(record).toMatchObject({ customer: accountId, contact: leadId, tags: ['onsite', 'paid'] });

    const detail = await get(t.app, `/admin/data/objects/visits/${id}`, s.cookie);
    expect(detail.body).toContain(`<a href="/admin/data/accounts/${accountId}">Acme Corp</a>`);
    expect(detail.body).toContain(`<a href="/admin/data/leads/${leadId}">Ada Lead</a>`);
    expect(detail.body).toContain('onsite, paid');

    const edit = await get(t.app, `/admin/data/objects/visits/${id}/edit`, s.cookie);
    expect(edit.body).toMatch(/name="tags" value="paid" checked/);
    expect(edit.body).toContain('Currently <strong>Acme Corp</strong>');
    const cleared = await submit(t.app, s, `/admin/data/objects/visits/${id}`, { title: 'Kick-off', customer: accountId, contact: leadId, tags: 'remote' });
    expect(cleared.status).toBe(303);
    expect((await call(t.app, 'GET', `/objects/visits/records/${id}`, { auth: a.auth })).body.data.record.tags).toEqual(['remote']);
  });

  it('shows the API\'s refusal of an id that is no live item next to the field', async () => {
    const res = await submit(t.app, s, '/admin/data/objects/visits', { title: 'Ghost', customer: '0000000000000000deadbeef' });
    expect(res.status).toBe(400);
    expect(fieldError(res.body, 'customer')).toContain('is not the id of an account of this organization');
  });
});

describe('related items on both sides', () => {
  it('the account page lists its leads, deals and the records pointing at it; the lead page its deals and records', async () => {
    const first = (await api('POST', '/objects/visits/records', { title: 'First visit', customer: accountId, contact: leadId })).record.id;
    const account = await get(t.app, `/admin/data/accounts/${accountId}`, s.cookie);
    expect(account.body).toContain(`<a href="/admin/data/leads/${leadId}">Ada Lead</a>`);
    expect(account.body).toContain('Acme renewal');
    expect(account.body).toContain('Related records');
    expect(account.body).toContain(`<a href="/admin/data/objects/visits/${first}">First visit</a>`);

    const lead = await get(t.app, `/admin/data/leads/${leadId}`, s.cookie);
    expect(lead.body).toContain(`<a href="/admin/data/accounts/${accountId}">Acme Corp</a>`);
    expect(lead.body).toContain('Acme renewal');
    expect(lead.body).toContain(`<a href="/admin/data/objects/visits/${first}">First visit</a>`);

    const next = (await api('POST', '/objects/visits/records', { title: 'Second visit', follows: first })).record.id;
    const record = await get(t.app, `/admin/data/objects/visits/${first}`, s.cookie);
    expect(record.body).toContain(`<a href="/admin/data/objects/visits/${next}">Second visit</a>`);
    const nextPage = await get(t.app, `/admin/data/objects/visits/${next}`, s.cookie);
    expect(nextPage.body).toContain(`<a href="/admin/data/objects/visits/${first}">First visit</a>`);
  });

  it('a trashed target reads as its bare id', async () => {
    const gone = (await api('POST', '/leads', { name: 'Soon gone' })).lead.id;
    const rec = (await api('POST', '/objects/visits/records', { title: 'Orphan', contact: gone })).record.id;
    expect((await call(t.app, 'DELETE', `/leads/${gone}`, { auth: a.auth })).status).toBe(200);
    const page = await get(t.app, `/admin/data/objects/visits/${rec}`, s.cookie);
    expect(page.body).toContain(`<code>${gone}</code> <span class="muted">(not found)</span>`);
  });

  it('the lead form picks an account', async () => {
    const form = await get(t.app, '/admin/data/leads/new', s.cookie);
    expect(form.body).toContain(`<option value="${accountId}" label="Acme Corp">`);
    const created = await submit(t.app, s, '/admin/data/leads', { name: 'Bo Picked', status: 'NEW', accountId });
    expect(created.status).toBe(303);
    const id = String(created.headers.location).split('/').pop()!.split('?')[0]!;
    expect((await call(t.app, 'GET', `/leads/${id}`, { auth: a.auth })).body.data.lead.accountId).toBe(accountId);
    const edit = await get(t.app, `/admin/data/leads/${id}/edit`, s.cookie);
    expect(edit.body).toContain('Currently <strong>Acme Corp</strong>');
  });

  it('the definition form takes a relation\'s target', async () => {
    const res = await submit(t.app, s, '/admin/config/objects', {
      slug: 'calls',
      name: 'Calls',
      'fields.0.key': 'who',
      'fields.0.label': 'Who',
      'fields.0.type': 'relation',
      'fields.0.target': 'leads',
      'fields.0.options': '',
    });
    expect(res.status, res.body.slice(0, 500)).toBe(303);
    const object = (await call(t.app, 'GET', '/objects/calls', { auth: a.auth })).body.data.object;
    expect(object.fields[0]).toMatchObject({ type: 'relation', target: 'leads' });
    const definition = await get(t.app, '/admin/config/objects/calls/definition', s.cookie);
    expect(definition.body).toContain('<td>Who</td><td><code>who</code></td><td>Relation to <code>leads</code></td>');
  });
});

describe('custom relation fields on leads, accounts and deals', () => {
  /** The options of a relation input's picker (the lead form's account picker offers accounts too). */
  const choices = (body: string, key: string) => new RegExp(`<datalist id="f-${key}-choices">([\\s\\S]*?)</datalist>`).exec(body)?.[1] ?? '';

  it('read as links named after their item in tables and on detail pages, and pick from the target\'s newest items', async () => {
    await api('PATCH', '/objects/leads', { fields: [{ key: 'partner', label: 'Partner', type: 'relation', target: 'accounts' }] });
    await api('PATCH', '/objects/deals', { fields: [{ key: 'origin', label: 'Origin', type: 'relation', target: 'leads' }] });
    await api('PATCH', '/objects/accounts', { fields: [{ key: 'lastVisit', label: 'Last visit', type: 'relation', target: 'visits' }] });
    const visit = (await api('POST', '/objects/visits/records', { title: 'Plant tour' })).record.id;
    const lead = (await api('POST', '/leads', { name: 'Pat Partner', partner: accountId })).lead.id;
    const deal = (await api('POST', '/deals', { name: 'Referral deal', origin: leadId })).deal.id;
    const account = (await api('POST', '/accounts', { name: 'Globex', lastVisit: visit })).account.id;
    const accountLink = `<a href="/admin/data/accounts/${accountId}">Acme Corp</a>`;
    const leadLink = `<a href="/admin/data/leads/${leadId}">Ada Lead</a>`;
    const visitLink = `<a href="/admin/data/objects/visits/${visit}">Plant tour</a>`;

    const leadPage = await get(t.app, `/admin/data/leads/${lead}`, s.cookie);
    expect(leadPage.body).toContain(`<dt>Partner</dt><dd>${accountLink}</dd>`);
    expect((await get(t.app, '/admin/data/leads', s.cookie)).body).toContain(`<td>${accountLink}</td>`);
    const leadEdit = await get(t.app, `/admin/data/leads/${lead}/edit`, s.cookie);
    expect(choices(leadEdit.body, 'partner')).toContain(`<option value="${accountId}" label="Acme Corp">`);
    expect(leadEdit.body).toContain('Currently <strong>Acme Corp</strong>');

    expect((await get(t.app, `/admin/data/deals/${deal}`, s.cookie)).body).toContain(`<dt>Origin</dt><dd>${leadLink}</dd>`);
    expect((await get(t.app, '/admin/data/deals', s.cookie)).body).toContain(`<td>${leadLink}</td>`);
    expect(choices((await get(t.app, '/admin/data/deals/new', s.cookie)).body, 'origin')).toContain(`<option value="${leadId}" label="Ada Lead">`);

    expect((await get(t.app, `/admin/data/accounts/${account}`, s.cookie)).body).toContain(`<dt>Last visit</dt><dd>${visitLink}</dd>`);
    expect((await get(t.app, '/admin/data/accounts', s.cookie)).body).toContain(`<td>${visitLink}</td>`);
    const accountForm = await get(t.app, `/admin/data/accounts/${account}/edit`, s.cookie);
    expect(choices(accountForm.body, 'lastVisit')).toContain(`<option value="${visit}" label="Plant tour">`);
    expect(accountForm.body).toContain('Currently <strong>Plant tour</strong>');
  });

  it('a trashed target reads as its bare id, as on record pages', async () => {
    const gone = (await api('POST', '/accounts', { name: 'Soon closed' })).account.id;
    const lead = (await api('POST', '/leads', { name: 'Left behind', partner: gone })).lead.id;
    expect((await call(t.app, 'DELETE', `/accounts/${gone}`, { auth: a.auth })).status).toBe(200);
    const page = await get(t.app, `/admin/data/leads/${lead}`, s.cookie);
    expect(page.body).toContain(`<dt>Partner</dt><dd><code>${gone}</code> <span class="muted">(not found)</span></dd>`);
  });
});
