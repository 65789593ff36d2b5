import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { listEvents } from '../../src/modules/events/outbox.store.js';
import type { TestApp } from '../helpers/test-app.js';
import type { Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';
import { checkedValues, fieldError, get, openConsole, submit, type ConsoleSession } from '../helpers/admin.js';

let t: TestApp;
let a: Seeded;
let admin: ConsoleSession;
const clock = new ManualClock('2026-03-02T09:00:00.000Z');

beforeAll(async () => {
  ({ t, a, s: admin } = await openConsole({ admin: true, name: 'Olga Objects' }, { app: { clock }, timezone: 'Europe/Paris' }));
});
afterAll(() => t?.close());

/** The definition form's fields as the browser would send them: blank rows included. */
type Row = Partial<Record<'key' | 'label' | 'type' | 'options' | 'required' | 'role', string>>;

function definition(fields: Row[], stages: Row[], extra: Record<string, string> = {}) {
  const body: Record<string, string> = { ...extra };
  [...fields, {}].forEach((f, i) => {
    for (const k of ['key', 'label', 'options'] as const) body[`fields.${i}.${k}`] = f[k] ?? '';
    body[`fields.${i}.type`] = f.type ?? 'text';
    if (f.required) body[`fields.${i}.required`] = 'on';
    if (f.role) body[`fields.${i}.role`] = 'due';
  });
  [...stages, {}].forEach((s, i) => {
    body[`stages.${i}.key`] = s.key ?? '';
    body[`stages.${i}.label`] = s.label ?? '';
  });
  return body;
}

const PROJECT_FIELDS: Row[] = [
  { key: 'title', label: 'Title', type: 'text', required: 'on' },
  { key: 'priority', label: 'Priority', type: 'select', options: 'low\nhigh\n' },
  { key: 'due_on', label: 'Due on', type: 'date', role: 'due' },
  { key: 'budget', label: 'Budget', type: 'number' },
  { key: 'kickoff', label: 'Kick-off', type: 'datetime' },
  { key: 'billable', label: 'Billable', type: 'boolean' },
];
const PROJECT_STAGES: Row[] = [{ key: 'planned', label: 'Planned' }, { key: 'done', label: 'Done' }];

describe('deal stages', () => {
  it('edits the ordered list, moving rows without saving, and refuses to drop a stage still used by deals', async () => {
    const page = await get(t.app, '/admin/config/deal-stages', admin.cookie);
    expect(page.body).toContain('name="stages.4.key" type="text" value="lost"');
    const draft = { 'stages.0.key': 'lead', 'stages.0.label': 'Lead in', 'stages.0.kind': 'open', 'stages.1.key': 'won', 'stages.1.label': 'Won', 'stages.1.kind': 'won' };
    const moved = await submit(t.app, admin, '/admin/config/deal-stages', { ...draft, _action: 'down:stages:0' });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatch(/name="stages.0.key" type="text" value="won"[\s\S]*name="stages.1.key" type="text" value="lead"/);
    const more = await submit(t.app, admin, '/admin/config/deal-stages', { ...draft, _action: 'more:stages' });
    expect(more.body).toContain('name="stages.4.key"');

    const bad = await submit(t.app, admin, '/admin/config/deal-stages', { ...draft, 'stages.0.key': 'Lead In', 'stages.2.key': '', 'stages.2.label': '', 'stages.2.kind': 'open' });
    expect(bad.status).toBe(400);
    expect(fieldError(bad.body, 'stages.0.key')).toBe('Error: Key has an invalid format');

    await call(t.app, 'POST', '/deals', { auth: a.auth, body: { name: 'Stuck', stage: 'negotiation' } });
    const refused = await submit(t.app, admin, '/admin/config/deal-stages', draft);
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('Can&#39;t remove stages still used by deals: negotiation (1 deal). Move those deals to another stage first.');
    expect(refused.body).toContain('<p class="field-error" id="f-stages-error"><span class="visually-hidden">Error:</span> stage negotiation is still used by 1 deal</p>');

    const saved = await submit(t.app, admin, '/admin/config/deal-stages', { ...draft, 'stages.2.key': 'negotiation', 'stages.2.label': 'Negotiation', 'stages.2.kind': 'open' });
    expect(saved.status, saved.body).toBe(303);
    const stages = (await call(t.app, 'GET', '/deal-stages', { auth: a.auth })).body.data.stages;
    expect(stages).toEqual([{ key: 'lead', label: 'Lead in', kind: 'open' }, { key: 'won', label: 'Won', kind: 'won' }, { key: 'negotiation', label: 'Negotiation', kind: 'open' }]);
    expect((await get(t.app, '/admin/data/deals/board', admin.cookie)).body).toMatch(/Lead in[\s\S]*Won[\s\S]*Negotiation/);
  });
});

describe('custom objects', () => {
  it('defines an object with typed fields, a due date and stages; it appears under Data', async () => {
    expect((await get(t.app, '/admin/config/objects/new', admin.cookie)).body).toContain('name="fields.2.key"');
    const res = await submit(t.app, admin, '/admin/config/objects', definition(PROJECT_FIELDS, PROJECT_STAGES, { slug: 'projects', name: 'Projects' }));
    expect(res.status, res.body).toBe(303);
    expect(res.location).toBe('/admin/config/objects/projects/definition?notice=created');
    const object = (await call(t.app, 'GET', '/objects/projects', { auth: a.auth })).body.data.object;
    expect(object.fields).toEqual([
      { key: 'title', label: 'Title', type: 'text', required: true },
      { key: 'priority', label: 'Priority', type: 'select', required: false, options: ['low', 'high'] },
      { key: 'due_on', label: 'Due on', type: 'date', required: false, role: 'due' },
      { key: 'budget', label: 'Budget', type: 'number', required: false },
      { key: 'kickoff', label: 'Kick-off', type: 'datetime', required: false },
      { key: 'billable', label: 'Billable', type: 'boolean', required: false },
    ]);
    expect(object.stages).toEqual(PROJECT_STAGES);
    const home = await get(t.app, '/admin', admin.cookie);
    expect(home.body).toContain('<li><a href="/admin/data/objects/projects">Projects</a></li>');
  });

  it('shows the service\'s refusals next to the rows they are about', async () => {
    const res = await submit(t.app, admin, '/admin/config/objects', definition(
      [{ key: 'title', label: 'Title' }, {}, { key: 'title', label: 'Again' }, { key: 'kind', label: 'Kind', type: 'select' }, { key: 'when', label: 'When', type: 'text', role: 'due' }],
      [],
      { slug: 'Bad Slug', name: 'Broken' },
    ));
    expect(res.status).toBe(400);
    expect(fieldError(res.body, 'slug')).toBe('Error: Slug has an invalid format');
    const fixed = await submit(t.app, admin, '/admin/config/objects', definition(
      [{ key: 'title', label: 'Title' }, {}, { key: 'title', label: 'Again' }, { key: 'kind', label: 'Kind', type: 'select' }, { key: 'when', label: 'When', type: 'text', role: 'due' }],
      [],
      { slug: 'broken', name: 'Broken' },
    ));
    // Row 2 was left blank: the errors keep pointing at the rows as the form shows them.
    expect(fieldError(fixed.body, 'fields.2.key')).toBe('Error: Key &quot;title&quot; is used by another field');
    expect(fieldError(fixed.body, 'fields.3.options')).toBe('Error: Options are required on a select field (at least one)');
    expect(fieldError(fixed.body, 'fields.4.role')).toBe('Error: Due date is only allowed on a date field');
    // The summary names the row's input, then says what is wrong with it, as one sentence.
    expect(fixed.body).toContain('href="#f-fields-3-options">Field 4 options are required on a select field (at least one)</a>');
    expect(fixed.body).toContain('href="#f-fields-4-role">Field 5 due date is only allowed on a date field</a>');
    const taken = await submit(t.app, admin, '/admin/config/objects', definition([], [], { slug: 'projects', name: 'Again' }));
    expect(fieldError(taken.body, 'slug')).toBe('Error: Slug &quot;projects&quot; is already used by another object');
  });

  it('adds fields and stages later, and refuses to remove a stage that records are in', async () => {
    await call(t.app, 'POST', '/objects/projects/records', { auth: a.auth, body: { title: 'Relaunch', stage: 'done' } });
    const page = await get(t.app, '/admin/config/objects/projects/definition', admin.cookie);
    expect(page.body).toContain('name="fields.6.key"');
    const fields = [...PROJECT_FIELDS, { key: 'client', label: 'Client', type: 'email' }];
    const added = await submit(t.app, admin, '/admin/config/objects/projects/definition', definition(fields, [...PROJECT_STAGES, { key: 'archived', label: 'Archived' }], { name: 'Projects' }));
    expect(added.status, added.body).toBe(303);
    const object = (await call(t.app, 'GET', '/objects/projects', { auth: a.auth })).body.data.object;
    expect(object.fields.at(-1)).toEqual({ key: 'client', label: 'Client', type: 'email', required: false });
    expect(object.stages.map((s: { key: string }) => s.key)).toEqual(['planned', 'done', 'archived']);
    const refused = await submit(t.app, admin, '/admin/config/objects/projects/definition', definition(fields, [PROJECT_STAGES[0]!], { name: 'Projects' }));
    expect(refused.status).toBe(400);
    expect(refused.body).toContain('<p class="field-error" id="f-stages-error"><span class="visually-hidden">Error:</span> stage &quot;done&quot; has records and can&#39;t be removed</p>');
    const more = await submit(t.app, admin, '/admin/config/objects/projects/definition', { ...definition(fields, [], { name: 'Projects' }), _action: 'more:fields' });
    expect(more.status).toBe(200);
    expect(more.body).toContain('name="fields.10.key"');
  });
});

describe('leads, accounts and deals among the objects', () => {
  it('link to their own pages and API paths, not to records pages', async () => {
    const list = await get(t.app, '/admin/config/objects', admin.cookie);
    for (const slug of ['leads', 'accounts', 'deals']) expect(list.body).toContain(`<td class="actions"><a href="/admin/data/${slug}">Records</a>`);
    expect(list.body).toContain('<td class="actions"><a href="/admin/data/objects/projects">Records</a>');
    expect(list.body).not.toMatch(/\/admin\/data\/objects\/(leads|accounts|deals)/);
    const page = await get(t.app, '/admin/config/objects/leads/definition', admin.cookie);
    expect(page.body).toContain('href="/admin/data/leads">Records of Leads</a>');
    expect(page.body).toContain('records at <code>/api/public/v1/leads</code>');
    expect(page.body).not.toContain('/objects/leads/records');
    expect((await get(t.app, '/admin/config/objects/projects/definition', admin.cookie)).body).toContain('records at <code>/api/public/v1/objects/projects/records</code>');
  });

  it('offer no stages and no due-date role, which the API refuses on them', async () => {
    for (const slug of ['leads', 'accounts', 'deals']) {
      const page = await get(t.app, `/admin/config/objects/${slug}/definition`, admin.cookie);
      expect(page.status).toBe(200);
      expect(page.body, slug).toContain('name="fields.0.key"');
      expect(page.body, slug).not.toContain('name="stages.0.key"');
      expect(page.body, slug).not.toContain('value="due"');
      expect(page.body, slug).not.toContain('id="def-stages"');
    }
    const projects = await get(t.app, '/admin/config/objects/projects/definition', admin.cookie);
    expect(projects.body).toContain('name="stages.0.key"');
    expect(projects.body).toContain('value="due"');
    expect(projects.body).toContain('id="def-stages"');
  });

  it('redirect their records addresses to their own pages; a form posted there is 404 and saves nothing', async () => {
    const deal = (await call(t.app, 'POST', '/deals', { auth: a.auth, body: { name: 'Redirected deal' } })).body.data.deal.id;
    const moves = [
      ['/admin/data/objects/leads', '/admin/data/leads'],
      ['/admin/data/objects/leads?q=ada&sort=name', '/admin/data/leads?q=ada&sort=name'],
      ['/admin/data/objects/accounts/new', '/admin/data/accounts/new'],
      [`/admin/data/objects/deals/${deal}`, `/admin/data/deals/${deal}`],
      [`/admin/data/objects/deals/${deal}/edit`, `/admin/data/deals/${deal}/edit`],
      ['/admin/data/objects/deals/trash', '/admin/data/deals/trash'],
    ];
    for (const [from, to] of moves) {
      const res = await get(t.app, from!, admin.cookie);
      expect(res.status, from).toBe(302);
      expect(res.location).toBe(to);
    }
    const posted = await submit(t.app, admin, '/admin/data/objects/leads', { name: 'Not a record', status: 'NEW' });
    expect(posted.status).toBe(404);
    expect(posted.body).toContain('Page not found');
    expect((await submit(t.app, admin, `/admin/data/objects/deals/${deal}/delete`)).status).toBe(404);
    expect((await call(t.app, 'GET', '/leads?q=Not%20a%20record', { auth: a.auth })).body.data.leads).toEqual([]);
    expect((await call(t.app, 'GET', `/deals/${deal}`, { auth: a.auth })).status).toBe(200);
  });
});

describe('records', () => {
  const idFrom = (location: string | undefined) => /\/admin\/data\/objects\/projects\/([0-9a-f]{24})/.exec(location ?? '')![1]!;

  it('creates a record from a form generated by the definition, converting each type', async () => {
    const form = await get(t.app, '/admin/data/objects/projects/new', admin.cookie);
    expect(form.body).toMatch(/id="f-due_on" name="due_on" type="date"/);
    expect(form.body).toMatch(/id="f-kickoff" name="kickoff" type="datetime-local"/);
    expect(form.body).toContain('<option value="high">high</option>');
    const res = await submit(t.app, admin, '/admin/data/objects/projects', { title: 'Website', priority: 'high', due_on: '2026-03-01', budget: '1500.5', kickoff: '2026-03-10T09:30', billable: 'true', client: '', stage: 'planned' });
    expect(res.status, res.body).toBe(303);
    const id = idFrom(res.location);
    const record = (await call(t.app, 'GET', `/objects/projects/records/${id}`, { auth: a.auth })).body.data.record;
    expect(record).toMatchObject({ title: 'Website', priority: 'high', due_on: '2026-03-01T00:00:00.000Z', budget: 1500.5, kickoff: '2026-03-10T08:30:00.000Z', billable: true, client: null, stage: 'planned' });
    const [event] = await listEvents(t.ctx.database.db, a.orgId, { objectId: id });
    expect(event!.data.actor).toEqual({ type: 'USER', id: admin.userId, channel: 'UI' });
    const edit = await get(t.app, `/admin/data/objects/projects/${id}/edit`, admin.cookie);
    expect(edit.body).toContain('value="2026-03-10T09:30"');
    expect(edit.body).toContain('<option value="true" selected>Yes</option>');
  });

  it('shows the API\'s messages next to the fields of the definition', async () => {
    const res = await submit(t.app, admin, '/admin/data/objects/projects', { title: '', priority: 'medium', due_on: '2026-02-30', budget: 'lots', client: 'not-an-email' });
    expect(res.status).toBe(400);
    expect(fieldError(res.body, 'title')).toBe('Error: Title is required');
    expect(fieldError(res.body, 'priority')).toBe('Error: Priority must be one of: low, high');
    expect(fieldError(res.body, 'due_on')).toBe('Error: Due on is not a real calendar date');
    expect(fieldError(res.body, 'budget')).toBe('Error: Budget must be a number');
    expect(fieldError(res.body, 'client')).toBe('Error: Client must be a valid e-mail address');
    expect(res.body).toContain('value="lots"');
  });

  it('edits only what changed; clearing a required field is refused in place', async () => {
    const created = await call(t.app, 'POST', '/objects/projects/records', { auth: a.auth, body: { title: 'Exact', kickoff: '2026-03-10T08:30:15.123Z' } });
    const id = created.body.data.record.id;
    const values = { title: 'Exact', priority: '', due_on: '', budget: '', kickoff: '2026-03-10T09:30:15', billable: '', client: '', stage: 'planned' };
    const cleared = await submit(t.app, admin, `/admin/data/objects/projects/${id}`, { ...values, title: '' });
    expect(fieldError(cleared.body, 'title')).toBe('Error: Title is required and cannot be cleared');
    const ok = await submit(t.app, admin, `/admin/data/objects/projects/${id}`, { ...values, stage: 'done', priority: 'low' });
    expect(ok.status).toBe(303);
    const record = (await call(t.app, 'GET', `/objects/projects/records/${id}`, { auth: a.auth })).body.data.record;
    expect(record).toMatchObject({ kickoff: '2026-03-10T08:30:15.123Z', priority: 'low', stage: 'done' });
    expect((await listEvents(t.ctx.database.db, a.orgId, { objectId: id })).map((e) => e.type)).toEqual(['record.created', 'record.stage_changed', 'record.updated']);
  });

  it('lists records with q, stage and overdue like the API', async () => {
    const list = await get(t.app, '/admin/data/objects/projects', admin.cookie);
    expect(list.body).toContain('<a href="/admin/data/objects/projects"');
    const titles = (body: string) => [...body.matchAll(/<td><a href="\/admin\/data\/objects\/projects\/[0-9a-f]{24}">(.*?)<\/a><\/td>/g)].map((m) => m[1]);
    expect(titles(list.body)).toEqual(['Exact', 'Website', 'Relaunch']);
    expect(titles((await get(t.app, '/admin/data/objects/projects?q=SITE', admin.cookie)).body)).toEqual(['Website']);
    expect(titles((await get(t.app, '/admin/data/objects/projects?stage=done', admin.cookie)).body)).toEqual(['Exact', 'Relaunch']);
    const overdue = await get(t.app, '/admin/data/objects/projects?overdue=true', admin.cookie);
    expect(titles(overdue.body)).toEqual(['Website']);
    expect(overdue.body).toContain('<span class="badge badge--warn">Overdue</span>');
    const bad = await get(t.app, '/admin/data/objects/projects?stage=nowhere', admin.cookie);
    expect(bad.status).toBe(400);
    expect(fieldError(bad.body, 'stage')).toBe('Error: Stage must be one of: planned, done, archived');
  });
});

describe('records with a multi_select', () => {
  it('keep an option holding `;` through the edit form, and accept it on create', async () => {
    const fields = [{ key: 'title', label: 'Title', type: 'text' }, { key: 'teams', label: 'Teams', type: 'multi_select', options: ['Sales; Marketing', 'Ops'] }];
    expect((await call(t.app, 'POST', '/objects', { auth: a.auth, body: { slug: 'campaigns', name: 'Campaigns', fields } })).status).toBe(201);
    const id = (await call(t.app, 'POST', '/objects/campaigns/records', { auth: a.auth, body: { title: 'Spring', teams: ['Sales; Marketing'] } })).body.data.record.id;
    const edit = await get(t.app, `/admin/data/objects/campaigns/${id}/edit`, admin.cookie);
    expect(checkedValues(edit.body, 'teams')).toEqual(['Sales; Marketing']);
    expect((await submit(t.app, admin, `/admin/data/objects/campaigns/${id}`, { title: 'Spring 2', teams: checkedValues(edit.body, 'teams') })).status).toBe(303);
    expect((await call(t.app, 'GET', `/objects/campaigns/records/${id}`, { auth: a.auth })).body.data.record).toMatchObject({ title: 'Spring 2', teams: ['Sales; Marketing'] });
    const created = await submit(t.app, admin, '/admin/data/objects/campaigns', { title: 'Autumn', teams: ['Ops', 'Sales; Marketing'] });
    expect(created.status, created.body).toBe(303);
    const newId = /\/admin\/data\/objects\/campaigns\/([0-9a-f]{24})/.exec(created.location ?? '')![1]!;
    expect((await call(t.app, 'GET', `/objects/campaigns/records/${newId}`, { auth: a.auth })).body.data.record.teams).toEqual(['Sales; Marketing', 'Ops']);
  });
});
