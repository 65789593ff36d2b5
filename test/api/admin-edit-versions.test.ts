import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';
import { addConsoleUser, get, openConsole, signIn, submit, type ConsoleSession } from '../helpers/admin.js';

/*
 * Console edit forms save against the version they were rendered from (docs/console.md, "Edits and changes made
 * meanwhile"): a change the API made after the form was opened is never silently reverted, and a save sends only
 * what the user changed.
 */

let t: TestApp;
let a: Seeded;
let s: ConsoleSession;

beforeAll(async () => {
  ({ t, a, s } = await openConsole({ name: 'Vera Version', admin: true }));
  const fields = [{ key: 'score', label: 'Score', type: 'number' }];
  expect((await call(t.app, 'PATCH', '/objects/leads', { auth: a.auth, body: { fields } })).status).toBe(200);
});
afterAll(() => t?.close());

/** The version (ETag) an edit page's form carries, as a browser would post it back. */
function versionOf(body: string): string {
  const m = /name="_version" value="([^"]+)"/.exec(body);
  if (!m) throw new Error('no version field on the page');
  return m[1]!.replaceAll('&quot;', '"');
}

const api = (method: 'GET' | 'POST' | 'PATCH' | 'PUT', url: string, body?: unknown) => call(t.app, method, url, { auth: a.auth, ...(body === undefined ? {} : { body }) });

describe('a change made through the API after the form was opened', () => {
  it('lead: the save is refused, the form shows the current values and what was typed; the API\'s change stays', async () => {
    const lead = (await api('POST', '/leads', { name: 'Lost Update', company: 'Old Co', score: 1 })).body.data.lead;
    const form = await get(t.app, `/admin/data/leads/${lead.id}/edit`, s.cookie);
    const version = versionOf(form.body);
    expect(version).toBe((await api('GET', `/leads/${lead.id}`)).headers.etag);
    expect((await api('PATCH', `/leads/${lead.id}`, { company: 'New Co (API)', score: 2 })).status).toBe(200);

    // The form as the browser shows it, with only the job title changed.
    const typed = { _version: version, name: 'Lost Update', company: 'Old Co', title: 'CTO', status: 'NEW', score: '1' };
    const refused = await submit(t.app, s, `/admin/data/leads/${lead.id}`, typed);
    expect(refused.status).toBe(409);
    expect(refused.body).toContain('This lead was changed by someone else since you opened it, so your changes were not saved.');
    expect(refused.body).toContain('Job title: “CTO”');
    expect(refused.body).toContain('value="New Co (API)"');
    expect(refused.body).not.toContain('Changes saved');
    expect((await api('GET', `/leads/${lead.id}`)).body.data.lead).toMatchObject({ company: 'New Co (API)', score: 2, title: null });

    // Saved again from the refreshed form: the user's change lands on top of the API's.
    const again = await submit(t.app, s, `/admin/data/leads/${lead.id}`, { ...typed, _version: versionOf(refused.body), company: 'New Co (API)', score: '2' });
    expect(again.status, again.body).toBe(303);
    expect((await api('GET', `/leads/${lead.id}`)).body.data.lead).toMatchObject({ company: 'New Co (API)', score: 2, title: 'CTO' });
  });

  it('deal: an API stage and amount change survive a console rename', async () => {
    const deal = (await api('POST', '/deals', { name: 'Pilot', amount: '10.00', currency: 'EUR', stage: 'qualification' })).body.data.deal;
    const version = versionOf((await get(t.app, `/admin/data/deals/${deal.id}/edit`, s.cookie)).body);
    expect((await api('PATCH', `/deals/${deal.id}`, { amount: '99.00', stage: 'won' })).status).toBe(200);
    const refused = await submit(t.app, s, `/admin/data/deals/${deal.id}`, { _version: version, name: 'Pilot renamed', stage: 'qualification', amount: '10.00', currency: 'EUR' });
    expect(refused.status).toBe(409);
    expect(refused.body).toContain('This deal was changed by someone else');
    expect((await api('GET', `/deals/${deal.id}`)).body.data.deal).toMatchObject({ name: 'Pilot', amount: '99.00', stage: 'won' });
  });

  it('account: an API change to a field the form didn\'t touch survives', async () => {
    const account = (await api('POST', '/accounts', { name: 'Acme', industry: 'Old' })).body.data.account;
    const version = versionOf((await get(t.app, `/admin/data/accounts/${account.id}/edit`, s.cookie)).body);
    expect((await api('PATCH', `/accounts/${account.id}`, { industry: 'New (API)' })).status).toBe(200);
    const refused = await submit(t.app, s, `/admin/data/accounts/${account.id}`, { _version: version, name: 'Acme Corp', industry: 'Old' });
    expect(refused.status).toBe(409);
    expect((await api('GET', `/accounts/${account.id}`)).body.data.account).toMatchObject({ name: 'Acme', industry: 'New (API)' });
  });

  it('deal stages: a stage added through PUT /deal-stages is not removed by a console save', async () => {
    const page = await get(t.app, '/admin/config/deal-stages', s.cookie);
    const version = versionOf(page.body);
    const current = (await api('GET', '/deal-stages')).body.data.stages as { key: string; label: string; kind: string }[];
    const added = [...current, { key: 'review', label: 'Review', kind: 'open' }];
    expect((await call(t.app, 'PUT', '/deal-stages', { auth: a.auth, headers: { 'if-match': version }, body: { stages: added } })).status).toBe(200);

    const rows = Object.fromEntries(current.flatMap((st, i) => [[`stages.${i}.key`, st.key], [`stages.${i}.label`, st.key === 'proposal' ? 'Proposal sent' : st.label], [`stages.${i}.kind`, st.kind]]));
    const refused = await submit(t.app, s, '/admin/config/deal-stages', { _version: version, ...rows });
    expect(refused.status).toBe(409);
    expect(refused.body).toContain('The stages were changed by someone else since you opened this page, so your list was not saved.');
    expect(refused.body).toContain('proposal “Proposal sent” (open)');
    expect(refused.body).toContain('value="review"');
    expect((await api('GET', '/deal-stages')).body.data.stages.map((st: { key: string }) => st.key)).toContain('review');

    const saved = await submit(t.app, s, '/admin/config/deal-stages', { _version: versionOf(refused.body), ...rows, 'stages.5.key': 'review', 'stages.5.label': 'Review', 'stages.5.kind': 'open' });
    expect(saved.status, saved.body).toBe(303);
    const stages = (await api('GET', '/deal-stages')).body.data.stages as { key: string; label: string }[];
    expect(stages.find((st) => st.key === 'proposal')?.label).toBe('Proposal sent');
    expect(stages.map((st) => st.key)).toContain('review');
  });
});

describe('an edit sends only what changed', () => {
  it('a lead, deal and account whose owner was deactivated are saved with another field changed', async () => {
    const owner = await addConsoleUser(t.ctx, a.orgId, { name: 'Gone Owner' });
    const lead = (await api('POST', '/leads', { name: 'Owned lead', ownerId: owner.id })).body.data.lead;
    const deal = (await api('POST', '/deals', { name: 'Owned deal', ownerId: owner.id })).body.data.deal;
    const account = (await api('POST', '/accounts', { name: 'Owned account', ownerId: owner.id })).body.data.account;
    expect((await submit(t.app, s, `/admin/config/users/${owner.id}/deactivate`)).status).toBe(303);

    const leadForm = await get(t.app, `/admin/data/leads/${lead.id}/edit`, s.cookie);
    const savedLead = await submit(t.app, s, `/admin/data/leads/${lead.id}`, { _version: versionOf(leadForm.body), name: 'Owned lead', status: 'NEW', ownerId: owner.id, company: 'Still theirs' });
    expect(savedLead.status, savedLead.body).toBe(303);
    expect((await api('GET', `/leads/${lead.id}`)).body.data.lead).toMatchObject({ company: 'Still theirs', ownerId: owner.id });

    const dealForm = await get(t.app, `/admin/data/deals/${deal.id}/edit`, s.cookie);
    const savedDeal = await submit(t.app, s, `/admin/data/deals/${deal.id}`, { _version: versionOf(dealForm.body), name: 'Owned deal, renamed', stage: deal.stage, ownerId: owner.id });
    expect(savedDeal.status, savedDeal.body).toBe(303);
    expect((await api('GET', `/deals/${deal.id}`)).body.data.deal).toMatchObject({ name: 'Owned deal, renamed', ownerId: owner.id });

    const accountForm = await get(t.app, `/admin/data/accounts/${account.id}/edit`, s.cookie);
    const savedAccount = await submit(t.app, s, `/admin/data/accounts/${account.id}`, { _version: versionOf(accountForm.body), name: 'Owned account', industry: 'Retail', ownerId: owner.id });
    expect(savedAccount.status, savedAccount.body).toBe(303);
    expect((await api('GET', `/accounts/${account.id}`)).body.data.account).toMatchObject({ industry: 'Retail', ownerId: owner.id });
  });

  it('a form saved unchanged writes nothing and says so', async () => {
    const lead = (await api('POST', '/leads', { name: 'Untouched', company: 'Same Co' })).body.data.lead;
    const form = await get(t.app, `/admin/data/leads/${lead.id}/edit`, s.cookie);
    const res = await submit(t.app, s, `/admin/data/leads/${lead.id}`, { _version: versionOf(form.body), name: 'Untouched', status: 'NEW', company: 'Same Co' });
    expect(res.status).toBe(303);
    expect((await get(t.app, res.location!, s.cookie)).body).toContain('Nothing was changed.');
    expect((await api('GET', `/leads/${lead.id}`)).body.data.lead.updatedAt).toBe(lead.updatedAt);
  });
});

describe('deal stages: deals in the trash', () => {
  it('the table and the refusal agree: live deals, and those in the trash that still hold the stage', async () => {
    const org = await seedOrg(t.ctx);
    const admin = await signIn(t.app, await addConsoleUser(t.ctx, org.orgId, { admin: true }));
    const make = async (name: string) => (await call(t.app, 'POST', '/deals', { auth: org.auth, body: { name, stage: 'proposal' } })).body.data.deal.id as string;
    await make('Live proposal');
    const trashed = await make('Trashed proposal');
    expect((await call(t.app, 'DELETE', `/deals/${trashed}`, { auth: org.auth })).status).toBe(200);

    const page = await get(t.app, '/admin/config/deal-stages', admin.cookie);
    expect(page.body).toContain('<a href="/admin/data/deals?stage=proposal">1 deal</a> (+1 in the <a href="/admin/data/deals/trash">trash</a>)');
    expect(page.body).toContain('<a href="/admin/data/deals?stage=negotiation">0 deals</a></td>');

    const stages = (await call(t.app, 'GET', '/deal-stages', { auth: org.auth })).body.data.stages as { key: string; label: string; kind: string }[];
    const rows = Object.fromEntries(stages.filter((st) => st.key !== 'proposal').flatMap((st, i) => [[`stages.${i}.key`, st.key], [`stages.${i}.label`, st.label], [`stages.${i}.kind`, st.kind]]));
    const refused = await submit(t.app, admin, '/admin/config/deal-stages', { _version: versionOf(page.body), ...rows });
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('Can&#39;t remove stages still used by deals: proposal (2 deals, 1 of them in the trash). Move those deals to another stage first. A deal in the trash counts until it is purged: restore it from the Deals trash and move it');
  });
});
