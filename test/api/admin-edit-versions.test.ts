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
  // Endpoints on a local address that nothing delivers to: no DNS lookup, no network.
  ({ t, a, s } = await openConsole({ name: 'Vera Version', admin: true }, { app: { env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } } }));
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

const api = (method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, body?: unknown) => call(t.app, method, url, { auth: a.auth, ...(body === undefined ? {} : { body }) });

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

describe('tasks, webhook endpoints and definitions: a change made through the API after the form was opened', () => {
  it('task: the save is refused with the current title and due day and what was typed; the API\'s change stays', async () => {
    const task = (await api('POST', '/tasks', { title: 'Call Ada', dueDate: '2026-12-01' })).body.data.task;
    const form = await get(t.app, `/admin/data/tasks/${task.id}/edit?from=tasks`, s.cookie);
    const version = versionOf(form.body);
    expect(version).toBe((await api('GET', `/tasks/${task.id}`)).headers.etag);
    expect((await api('PATCH', `/tasks/${task.id}`, { dueDate: '2026-12-24' })).status).toBe(200);

    const typed = { _version: version, from: 'tasks', title: 'Call Ada back', dueDate: '2026-12-01' };
    const refused = await submit(t.app, s, `/admin/data/tasks/${task.id}/edit`, typed);
    expect(refused.status).toBe(409);
    expect(refused.body).toContain('This task was changed by someone else since you opened it, so your changes were not saved.');
    expect(refused.body).toContain('Title: “Call Ada back”; Due date: “2026-12-01”');
    expect(refused.body).toContain('value="2026-12-24"');
    expect((await api('GET', `/tasks/${task.id}`)).body.data.task).toMatchObject({ title: 'Call Ada', dueDate: '2026-12-24T00:00:00.000Z' });

    const again = await submit(t.app, s, `/admin/data/tasks/${task.id}/edit`, { ...typed, _version: versionOf(refused.body), dueDate: '2026-12-24' });
    expect(again.status, again.body).toBe(303);
    expect((await api('GET', `/tasks/${task.id}`)).body.data.task).toMatchObject({ title: 'Call Ada back', dueDate: '2026-12-24T00:00:00.000Z' });
  });

  it('webhook endpoint: an API change to its description survives a console change of its URL', async () => {
    const webhook = (await api('POST', '/webhooks', { url: 'http://127.0.0.1:9/old', events: ['account.deleted'], description: 'Old' })).body.data.webhook;
    const form = await get(t.app, `/admin/config/webhooks/${webhook.id}/edit`, s.cookie);
    const version = versionOf(form.body);
    expect(version).toBe((await api('GET', `/webhooks/${webhook.id}`)).headers.etag);
    expect((await api('PATCH', `/webhooks/${webhook.id}`, { description: 'Set through the API' })).status).toBe(200);

    const typed = { _version: version, url: 'http://127.0.0.1:9/new', events: 'account.deleted', description: 'Old' };
    const refused = await submit(t.app, s, `/admin/config/webhooks/${webhook.id}`, typed);
    expect(refused.status).toBe(409);
    expect(refused.body).toContain('This endpoint was changed by someone else since you opened it, so your changes were not saved.');
    expect(refused.body).toContain('Endpoint URL: “http://127.0.0.1:9/new”; Description: “Old”');
    expect(refused.body).toContain('Set through the API</textarea>');
    expect((await api('GET', `/webhooks/${webhook.id}`)).body.data.webhook).toMatchObject({ url: 'http://127.0.0.1:9/old', description: 'Set through the API' });

    const again = await submit(t.app, s, `/admin/config/webhooks/${webhook.id}`, { ...typed, _version: versionOf(refused.body), description: 'Set through the API' });
    expect(again.status, again.body).toBe(303);
    expect((await api('GET', `/webhooks/${webhook.id}`)).body.data.webhook).toMatchObject({ url: 'http://127.0.0.1:9/new', description: 'Set through the API' });
  });

  /** The definition form's rows as a browser posts them: `rows` filled, then one blank row. */
  const definitionForm = (name: string, rows: { key: string; label: string; type: string }[]) =>
    Object.fromEntries([
      ['name', name],
      ...[...rows, { key: '', label: '', type: 'text' }].flatMap((row, i) => [[`fields.${i}.key`, row.key], [`fields.${i}.label`, row.label], [`fields.${i}.type`, row.type], [`fields.${i}.options`, ''], [`fields.${i}.target`, '']]),
    ]);

  it('custom object: a field added through the API is not removed by a console save of the definition', async () => {
    const title = { key: 'title', label: 'Title', type: 'text' };
    expect((await api('POST', '/objects', { slug: 'projects', name: 'Projects', fields: [title] })).status).toBe(201);
    const version = versionOf((await get(t.app, '/admin/config/objects/projects/definition', s.cookie)).body);
    expect(version).toBe((await api('GET', '/objects/projects')).headers.etag);
    const budget = { key: 'budget', label: 'Budget', type: 'number' };
    expect((await api('PATCH', '/objects/projects', { fields: [title, budget] })).status).toBe(200);

    const owner = { key: 'owner', label: 'Owner', type: 'text' };
    const refused = await submit(t.app, s, '/admin/config/objects/projects/definition', { _version: version, ...definitionForm('Projects', [title, owner]) });
    expect(refused.status).toBe(409);
    expect(refused.body).toContain('This definition was changed by someone else since you opened it, so your changes were not saved.');
    expect(refused.body).toContain('Field 2: “owner, Owner, text”');
    expect(refused.body).toContain('name="fields.1.key" type="text" value="budget"');
    expect((await api('GET', '/objects/projects')).body.data.object.fields.map((f: { key: string }) => f.key)).toEqual(['title', 'budget']);

    // "Add more field rows" keeps the version the rows were edited from.
    const more = await submit(t.app, s, '/admin/config/objects/projects/definition', { _version: versionOf(refused.body), _action: 'more:fields', ...definitionForm('Projects', [title, budget, owner]) });
    expect(more.status).toBe(200);
    const saved = await submit(t.app, s, '/admin/config/objects/projects/definition', { _version: versionOf(more.body), ...definitionForm('Projects', [title, budget, owner]) });
    expect(saved.status, saved.body).toBe(303);
    expect((await api('GET', '/objects/projects')).body.data.object.fields.map((f: { key: string }) => f.key)).toEqual(['title', 'budget', 'owner']);
  });

  it('custom fields of accounts: a field added through the API is not removed by a console save', async () => {
    const version = versionOf((await get(t.app, '/admin/config/objects/accounts/definition', s.cookie)).body);
    expect(version).toBe((await api('GET', '/objects/accounts')).headers.etag);
    const tier = { key: 'tier', label: 'Tier', type: 'text' };
    expect((await api('PATCH', '/objects/accounts', { fields: [tier] })).status).toBe(200);

    const refused = await submit(t.app, s, '/admin/config/objects/accounts/definition', { _version: version, ...definitionForm('Accounts', [{ key: 'region', label: 'Region', type: 'text' }]) });
    expect(refused.status).toBe(409);
    expect(refused.body).toContain('Field 1: “region, Region, text”');
    expect((await api('GET', '/objects/accounts')).body.data.object.fields.filter((f: { readOnly?: boolean }) => !f.readOnly).map((f: { key: string }) => f.key)).toEqual(['tier']);
  });

  it('a POST without _version (a script\'s) is unconditional, as a PATCH without If-Match', async () => {
    const task = (await api('POST', '/tasks', { title: 'Scripted' })).body.data.task;
    expect((await api('PATCH', `/tasks/${task.id}`, { dueDate: '2026-12-24' })).status).toBe(200);
    expect((await submit(t.app, s, `/admin/data/tasks/${task.id}/edit`, { from: 'tasks', title: 'Scripted, renamed', dueDate: '' })).status).toBe(303);
    expect((await api('GET', `/tasks/${task.id}`)).body.data.task).toMatchObject({ title: 'Scripted, renamed', dueDate: null });

    const webhook = (await api('POST', '/webhooks', { url: 'http://127.0.0.1:9/scripted', events: ['account.deleted'] })).body.data.webhook;
    expect((await api('PATCH', `/webhooks/${webhook.id}`, { description: 'API' })).status).toBe(200);
    expect((await submit(t.app, s, `/admin/config/webhooks/${webhook.id}`, { url: 'http://127.0.0.1:9/scripted', events: 'account.deleted', description: 'Script' })).status).toBe(303);
    expect((await api('GET', `/webhooks/${webhook.id}`)).body.data.webhook.description).toBe('Script');

    expect((await api('POST', '/objects', { slug: 'scripted', name: 'Scripted', fields: [{ key: 'title', label: 'Title', type: 'text' }] })).status).toBe(201);
    expect((await api('PATCH', '/objects/scripted', { name: 'Scripted (API)' })).status).toBe(200);
    expect((await submit(t.app, s, '/admin/config/objects/scripted/definition', definitionForm('Scripted (console)', [{ key: 'title', label: 'Title', type: 'text' }]))).status).toBe(303);
    expect((await api('GET', '/objects/scripted')).body.data.object.name).toBe('Scripted (console)');
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
