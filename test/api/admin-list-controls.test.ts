import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';
import { addConsoleUser, fieldError, get, signIn, type ConsoleSession } from '../helpers/admin.js';

/*
 * The console's order and creation-date controls on the leads, accounts and deals lists and on an object's records
 * (the API's sort and createdAfter/Before), the status, due and order controls of My tasks, the same order and
 * days on the logs (a webhook's delivery log and the past erasures) and on the webhook endpoints with their enabled
 * and event-type filters, and the Show control of an item's History panel (the timeline's types).
 */

const clock = new ManualClock('2026-05-01T10:00:00.000Z');
let t: TestApp;
let a: Seeded;
let s: ConsoleSession;

beforeAll(async () => {
  t = await buildTestApp({ clock, env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  a = await seedOrg(t.ctx);
  for (const [name, day] of [['Bravo', '2026-05-01'], ['Alpha', '2026-05-02'], ['Charlie', '2026-05-03']] as const) {
    clock.set(`${day}T10:00:00.000Z`);
    for (const path of ['/leads', '/accounts', '/deals']) expect((await call(t.app, 'POST', path, { auth: a.auth, body: { name } })).status).toBe(201);
  }
  s = await signIn(t.app, await addConsoleUser(t.ctx, a.orgId, { name: 'Clara Console' }));
});
afterAll(() => t?.close());

const order = (body: string, names: string[]) => names.map((n) => body.indexOf(`>${n}<`));

/** Each name is on the page, in this order. */
function expectInOrder(body: string, names: string[]): void {
  const at = order(body, names);
  expect(at[0]).toBeGreaterThan(0);
  expect(at).toEqual([...at].sort((x, y) => x - y));
}

describe.each(['leads', 'accounts', 'deals'])('console %s list', (list) => {
  it('orders by the chosen sort and keeps it in the pager', async () => {
    const byName = await get(t.app, `/admin/data/${list}?sort=name`, s.cookie);
    expect(byName.status).toBe(200);
    expectInOrder(byName.body, ['Alpha', 'Bravo', 'Charlie']);
    expect(byName.body).toContain('value="name" selected');
    const newest = await get(t.app, `/admin/data/${list}`, s.cookie);
    const [a2, , c2] = order(newest.body, ['Alpha', 'Bravo', 'Charlie']);
    expect(c2).toBeLessThan(a2!);
  });

  it('filters by creation day, both ends inclusive', async () => {
    const res = await get(t.app, `/admin/data/${list}?from=2026-05-02&to=2026-05-02`, s.cookie);
    expect(res.status).toBe(200);
    expect(res.body).toContain('>Alpha<');
    expect(res.body).not.toContain('>Bravo<');
    expect(res.body).not.toContain('>Charlie<');
  });

  it('answers 400 with the form for an unknown sort', async () => {
    const res = await get(t.app, `/admin/data/${list}?sort=seq`, s.cookie);
    expect(res.status).toBe(400);
  });

  it('answers 400 with the message next to the control for a day that does not exist', async () => {
    const res = await get(t.app, `/admin/data/${list}?from=2024-13-45&to=2024-02-31`, s.cookie);
    expect(res.status).toBe(400);
    expect(fieldError(res.body, 'from')).toContain('is not a real calendar date');
    expect(fieldError(res.body, 'to')).toContain('is not a real calendar date');
    expect(fieldError((await get(t.app, `/admin/data/${list}?from=yesterday`, s.cookie)).body, 'from')).toContain('must be a date in the form YYYY-MM-DD');
  });

  it('answers 400 next to "Created to" for a range that ends before it starts, instead of an empty list', async () => {
    const res = await get(t.app, `/admin/data/${list}?from=2026-05-03&to=2026-05-01`, s.cookie);
    expect(res.status).toBe(400);
    expect(fieldError(res.body, 'to')).toContain('must be on or after the Created from day');
    expect(res.body).toContain('value="2026-05-03"');
  });
});

describe('console records list', () => {
  beforeAll(async () => {
    const fields = [{ key: 'title', label: 'Title', type: 'text' }, { key: 'visitOn', label: 'Visit on', type: 'date' }];
    expect((await call(t.app, 'POST', '/objects', { auth: a.auth, body: { slug: 'visits', name: 'Visits', fields } })).status).toBe(201);
    for (const [title, day, visitOn] of [['Bravo', '2026-05-01', '2026-07-03'], ['Alpha', '2026-05-02', '2026-07-01'], ['Charlie', '2026-05-03', '2026-07-02']] as const) {
      clock.set(`${day}T12:00:00.000Z`);
      expect((await call(t.app, 'POST', '/objects/visits/records', { auth: a.auth, body: { title, visitOn } })).status).toBe(201);
    }
  });

  it('orders by creation or by a date field, filters by creation day, keeps both in the pager, and refuses a name order', async () => {
    const byVisit = await get(t.app, '/admin/data/objects/visits?sort=visitOn', s.cookie);
    expect(byVisit.status).toBe(200);
    expectInOrder(byVisit.body, ['Alpha', 'Charlie', 'Bravo']);
    expect(byVisit.body).toContain('value="visitOn" selected');
    expect(byVisit.body).not.toContain('value="name"');
    const day = await get(t.app, '/admin/data/objects/visits?from=2026-05-02&to=2026-05-02', s.cookie);
    expect(day.body).toContain('>Alpha<');
    expect(day.body).not.toContain('>Bravo<');
    expect((await get(t.app, '/admin/data/objects/visits?sort=name', s.cookie)).status).toBe(400);
    const impossible = await get(t.app, '/admin/data/objects/visits?from=2024-99-99', s.cookie);
    expect(impossible.status).toBe(400);
    expect(fieldError(impossible.body, 'from')).toContain('is not a real calendar date');
    const reversed = await get(t.app, '/admin/data/objects/visits?from=2026-05-03&to=2026-05-01', s.cookie);
    expect(reversed.status).toBe(400);
    expect(fieldError(reversed.body, 'to')).toContain('must be on or after the Created from day');
  });
});

describe('creation days in the organization\'s time zone', () => {
  let la: Seeded;
  let laSession: ConsoleSession;

  // 2026-05-02T03:00Z is 20:00 on 1 May in Los Angeles: the tables show "1 May 2026", so the filter finds it on that day.
  beforeAll(async () => {
    const before = clock.now();
    la = await seedOrg(t.ctx, { timezone: 'America/Los_Angeles' });
    expect((await call(t.app, 'POST', '/objects', { auth: la.auth, body: { slug: 'calls', name: 'Calls', fields: [{ key: 'title', label: 'Title', type: 'text' }] } })).status).toBe(201);
    for (const [name, at] of [['Evening', '2026-05-02T03:00:00.000Z'], ['Morning', '2026-05-02T15:00:00.000Z']] as const) {
      clock.set(at);
      for (const path of ['/leads', '/accounts', '/deals']) expect((await call(t.app, 'POST', path, { auth: la.auth, body: { name } })).status).toBe(201);
      expect((await call(t.app, 'POST', '/objects/calls/records', { auth: la.auth, body: { title: name } })).status).toBe(201);
    }
    clock.set(before);
    laSession = await signIn(t.app, await addConsoleUser(t.ctx, la.orgId));
  });

  it.each(['leads', 'accounts', 'deals', 'objects/calls'])('%s: a day is the organization\'s day the Created column shows', async (list) => {
    const first = await get(t.app, `/admin/data/${list}?from=2026-05-01&to=2026-05-01`, laSession.cookie);
    expect(first.status).toBe(200);
    expect(first.body).toContain('>Evening<');
    expect(first.body).not.toContain('>Morning<');
    const second = await get(t.app, `/admin/data/${list}?from=2026-05-02&to=2026-05-02`, laSession.cookie);
    expect(second.body).toContain('>Morning<');
    expect(second.body).not.toContain('>Evening<');
    const open = await get(t.app, `/admin/data/${list}?from=2026-05-01&to=9999-12-31`, laSession.cookie);
    expect(open.status).toBe(200);
    expect(open.body).toContain('>Evening<');
    expect(open.body).toContain('>Morning<');
  });
});

describe('console My tasks', () => {
  it('filters by status and due day and orders by due day', async () => {
    // Today is 2026-05-03 on the clock (UTC organization).
    const mine = { assigneeId: s.userId };
    for (const body of [
      { title: 'Late one', dueDate: '2026-04-25', ...mine },
      { title: 'This week', dueDate: '2026-05-05', ...mine },
      { title: 'Next month', dueDate: '2026-06-10', ...mine },
      { title: 'Finished', dueDate: '2026-05-04', status: 'done', ...mine },
    ]) {
      expect((await call(t.app, 'POST', '/tasks', { auth: a.auth, body })).status).toBe(201);
    }
    const open = await get(t.app, '/admin/data/tasks?sort=dueDate', s.cookie);
    expect(open.status).toBe(200);
    expectInOrder(open.body, ['Late one', 'This week', 'Next month']);
    expect(open.body).not.toContain('>Finished<');
    const overdue = await get(t.app, '/admin/data/tasks?due=overdue', s.cookie);
    expect(overdue.body).toContain('>Late one<');
    expect(overdue.body).not.toContain('>This week<');
    const soon = await get(t.app, '/admin/data/tasks?due=week&status=all', s.cookie);
    expect(soon.body).toContain('>This week<');
    expect(soon.body).toContain('>Finished<');
    expect(soon.body).not.toContain('>Next month<');
    const done = await get(t.app, '/admin/data/tasks?status=done', s.cookie);
    expect(done.body).toContain('>Finished<');
    expect(done.body).not.toContain('>Late one<');
    expect((await get(t.app, '/admin/data/tasks?status=done&due=overdue', s.cookie)).status).toBe(400);
  });
});

describe("console logs: a webhook's delivery log and the past erasures", () => {
  let hook: string;
  const events: string[] = [];

  // One delivery and one erasure a day, 1 to 3 May (UTC organization).
  beforeAll(async () => {
    const before = clock.now();
    hook = (await call(t.app, 'POST', '/webhooks', { auth: a.auth, body: { url: 'http://127.0.0.1:9/console-log', events: ['*'] } })).body.data.webhook.id;
    for (const [n, day] of ['2026-05-01', '2026-05-02', '2026-05-03'].entries()) {
      clock.set(`${day}T11:00:00.000Z`);
      const sent = await call(t.app, 'POST', `/webhooks/${hook}/test`, { auth: a.auth });
      expect(sent.status).toBe(201);
      events.push(sent.body.data.delivery.eventId);
      expect((await call(t.app, 'POST', '/privacy/erasures', { auth: a.auth, body: { email: `gone${n}@example.com`, reason: `ticket-${n + 1}` } })).status).toBe(201);
    }
    clock.set(before);
  });

  it('the delivery log orders by creation either way, filters by creation day and status, and refuses what the API refuses', async () => {
    const path = `/admin/config/webhooks/${hook}`;
    const newest = await get(t.app, path, s.cookie);
    expect(newest.status).toBe(200);
    expectInOrder(newest.body, [...events].reverse());
    const oldest = await get(t.app, `${path}?sort=createdAt`, s.cookie);
    expectInOrder(oldest.body, events);
    expect(oldest.body).toContain('value="createdAt" selected');
    expect(oldest.body).not.toContain('value="-updatedAt"');
    const day = await get(t.app, `${path}?from=2026-05-02&to=2026-05-02`, s.cookie);
    expect(day.status).toBe(200);
    expect(day.body).toContain(`>${events[1]}<`);
    expect(day.body).not.toContain(`>${events[0]}<`);
    expect(day.body).not.toContain(`>${events[2]}<`);
    const pending = await get(t.app, `${path}?status=PENDING&from=2026-05-03`, s.cookie);
    expect(pending.body).toContain(`>${events[2]}<`);
    expect(pending.body).not.toContain(`>${events[1]}<`);
    expect((await get(t.app, `${path}?status=SUCCEEDED`, s.cookie)).body).toContain('No deliveries match.');
    expect((await get(t.app, `${path}?sort=-updatedAt`, s.cookie)).status).toBe(400);
    const bogus = await get(t.app, `${path}?status=BOGUS`, s.cookie);
    expect(bogus.status).toBe(400);
    expect(fieldError(bogus.body, 'status')).toContain('must be one of');
    const reversed = await get(t.app, `${path}?from=2026-05-03&to=2026-05-01`, s.cookie);
    expect(reversed.status).toBe(400);
    expect(fieldError(reversed.body, 'to')).toContain('must be on or after the Created from day');
    expect(reversed.body).not.toContain(`>${events[0]}<`);
  });

  it('the past erasures order by completion either way and filter by completion day', async () => {
    const newest = await get(t.app, '/admin/config/privacy', s.cookie);
    expect(newest.status).toBe(200);
    expectInOrder(newest.body, ['ticket-3', 'ticket-2', 'ticket-1']);
    expect(newest.body).toContain('Completed from');
    expectInOrder((await get(t.app, '/admin/config/privacy?sort=createdAt', s.cookie)).body, ['ticket-1', 'ticket-2', 'ticket-3']);
    const day = await get(t.app, '/admin/config/privacy?from=2026-05-02&to=2026-05-02', s.cookie);
    expect(day.status).toBe(200);
    expect(day.body).toContain('>ticket-2<');
    expect(day.body).not.toContain('>ticket-1<');
    expect(day.body).not.toContain('>ticket-3<');
    expect((await get(t.app, '/admin/config/privacy?from=2026-06-01', s.cookie)).body).toContain('No erasures match.');
    expect((await get(t.app, '/admin/config/privacy?sort=name', s.cookie)).status).toBe(400);
    const reversed = await get(t.app, '/admin/config/privacy?from=2026-05-03&to=2026-05-01', s.cookie);
    expect(reversed.status).toBe(400);
    expect(fieldError(reversed.body, 'to')).toContain('must be on or after the Completed from day');
    expect(fieldError((await get(t.app, '/admin/config/privacy?from=2024-13-45', s.cookie)).body, 'from')).toContain('is not a real calendar date');
  });
});

describe('console webhook endpoints', () => {
  let o: Seeded;
  let os: ConsoleSession;
  const url = (name: string) => `http://127.0.0.1:9/${name}`;

  // One endpoint a day, 1 to 3 May: leads (disabled), every event, deals; and 30 more on 4 May to fill two pages.
  beforeAll(async () => {
    const before = clock.now();
    o = await seedOrg(t.ctx);
    for (const [name, day, events] of [['leads-hook', '2026-05-01', ['lead.created']], ['all-hook', '2026-05-02', ['*']], ['deals-hook', '2026-05-03', ['deal.created']]] as const) {
      clock.set(`${day}T10:00:00.000Z`);
      const res = await call(t.app, 'POST', '/webhooks', { auth: o.auth, body: { url: url(name), events } });
      expect(res.status).toBe(201);
      if (name === 'leads-hook') expect((await call(t.app, 'PATCH', `/webhooks/${res.body.data.webhook.id}`, { auth: o.auth, body: { enabled: false } })).status).toBe(200);
    }
    clock.set('2026-05-04T10:00:00.000Z');
    for (let n = 0; n < 30; n += 1) expect((await call(t.app, 'POST', '/webhooks', { auth: o.auth, body: { url: url(`task-hook-${n}`), events: ['task.created'] } })).status).toBe(201);
    clock.set(before);
    os = await signIn(t.app, await addConsoleUser(t.ctx, o.orgId));
  });

  const PATH = '/admin/config/webhooks';
  const shown = (body: string, name: string) => body.includes(`>${url(name)}<`);

  it('filters by enabled and by event type (an endpoint on every event receives each), as GET /webhooks does', async () => {
    const disabled = await get(t.app, `${PATH}?enabled=false`, os.cookie);
    expect(disabled.status).toBe(200);
    expect(disabled.body).toContain('<option value="false" selected>Disabled</option>');
    expect(['leads-hook', 'all-hook', 'deals-hook'].map((n) => shown(disabled.body, n))).toEqual([true, false, false]);
    const deals = await get(t.app, `${PATH}?eventType=deal.created&enabled=true`, os.cookie);
    expect(['leads-hook', 'all-hook', 'deals-hook'].map((n) => shown(deals.body, n))).toEqual([false, true, true]);
    expect(deals.body).toContain('<option value="deal.created" selected>deal.created</option>');
    expect(deals.body).not.toContain('value="webhook.test"');
    expect((await get(t.app, `${PATH}?eventType=note.created&enabled=false`, os.cookie)).body).toContain('No endpoints match.');
  });

  it('orders by creation, filters by creation day, and keeps the filter in the pager', async () => {
    const oldest = await get(t.app, `${PATH}?sort=createdAt&to=2026-05-03`, os.cookie);
    expect(oldest.status).toBe(200);
    expectInOrder(oldest.body, [url('leads-hook'), url('all-hook'), url('deals-hook')]);
    const day = await get(t.app, `${PATH}?from=2026-05-02&to=2026-05-02`, os.cookie);
    expect(['leads-hook', 'all-hook', 'deals-hook'].map((n) => shown(day.body, n))).toEqual([false, true, false]);
    const first = await get(t.app, `${PATH}?eventType=task.created&sort=createdAt`, os.cookie);
    expect(first.body).toContain('Showing 1–25 of 31');
    expect(first.body).toContain('href="/admin/config/webhooks?eventType=task.created&amp;sort=createdAt&amp;page=2"');
    const second = await get(t.app, `${PATH}?eventType=task.created&sort=createdAt&page=2`, os.cookie);
    expect(second.body).toContain('Showing 26–31 of 31');
    expect(shown(second.body, 'deals-hook')).toBe(false);
  });

  it('answers 400 with the message next to the control for what the API refuses', async () => {
    const enabled = await get(t.app, `${PATH}?enabled=maybe`, os.cookie);
    expect(enabled.status).toBe(400);
    expect(fieldError(enabled.body, 'enabled')).toContain('must be boolean');
    expect(enabled.body).not.toContain(url('all-hook'));
    const type = await get(t.app, `${PATH}?eventType=lead.exploded`, os.cookie);
    expect(type.status).toBe(400);
    expect(fieldError(type.body, 'eventType')).toContain('must be one of');
    expect((await get(t.app, `${PATH}?sort=name`, os.cookie)).status).toBe(400);
    const reversed = await get(t.app, `${PATH}?from=2026-05-03&to=2026-05-01`, os.cookie);
    expect(reversed.status).toBe(400);
    expect(fieldError(reversed.body, 'to')).toContain('must be on or after the Created from day');
  });
});

describe("console History panel's Show control", () => {
  let o: Seeded;
  let os: ConsoleSession;
  const pages: Record<string, string> = {};

  // A lead, an account, a deal and a record, each with a note and a task on it.
  beforeAll(async () => {
    o = await seedOrg(t.ctx);
    expect((await call(t.app, 'POST', '/objects', { auth: o.auth, body: { slug: 'trips', name: 'Trips', fields: [{ key: 'title', label: 'Title', type: 'text' }] } })).status).toBe(201);
    for (const [object, path, body, page] of [
      ['lead', '/leads', { name: 'Shown lead' }, '/admin/data/leads'],
      ['account', '/accounts', { name: 'Shown account' }, '/admin/data/accounts'],
      ['deal', '/deals', { name: 'Shown deal' }, '/admin/data/deals'],
      ['record', '/objects/trips/records', { title: 'Shown trip' }, '/admin/data/objects/trips'],
    ] as const) {
      const created = await call(t.app, 'POST', path, { auth: o.auth, body });
      expect(created.status).toBe(201);
      const id = created.body.data[object].id as string;
      const target = { object, id, ...(object === 'record' ? { objectSlug: 'trips' } : {}) };
      expect((await call(t.app, 'POST', '/notes', { auth: o.auth, body: { target, body: `A note on the ${object}` } })).status).toBe(201);
      expect((await call(t.app, 'POST', '/tasks', { auth: o.auth, body: { target, title: `Call about the ${object}` } })).status).toBe(201);
      pages[object] = `${page}/${id}`;
    }
    os = await signIn(t.app, await addConsoleUser(t.ctx, o.orgId));
  });

  /** What each entry of the History panel says first: the change, "Note", or "Task: <title>". */
  const entries = (body: string) => [...body.matchAll(/<span class="activity-what">([^<]*)<\/span>/g)].map((m) => m[1]!);

  it.each(['lead', 'account', 'deal', 'record'])('%s: shows every entry, or only the changes, the notes or the tasks', async (object) => {
    const all = await get(t.app, pages[object]!, os.cookie);
    expect(all.status).toBe(200);
    expect(all.body).toContain(`<form method="get" action="${pages[object]}#history"`);
    expect(entries(all.body)).toEqual(expect.arrayContaining(['Note', `Task: Call about the ${object}`]));
    expect(entries(all.body).length).toBeGreaterThan(2);
    const notes = await get(t.app, `${pages[object]}?types=note`, os.cookie);
    expect(entries(notes.body)).toEqual(['Note']);
    expect(notes.body).toContain(`A note on the ${object}`);
    expect(notes.body).toContain('<option value="note" selected>Notes</option>');
    expect(entries((await get(t.app, `${pages[object]}?types=task`, os.cookie)).body)).toEqual([`Task: Call about the ${object}`]);
    const changes = entries((await get(t.app, `${pages[object]}?types=event`, os.cookie)).body);
    expect(changes.length).toBeGreaterThan(0);
    expect(changes.filter((e) => e === 'Note' || e.startsWith('Task: '))).toEqual([]);
  });

  it('pages past the 20 newest entries with Older entries, keeping the Show choice, and leads back to the newest', async () => {
    const created = await call(t.app, 'POST', '/leads', { auth: o.auth, body: { name: 'Long history' } });
    const id = created.body.data.lead.id as string;
    for (let i = 1; i <= 25; i++) expect((await call(t.app, 'POST', '/notes', { auth: o.auth, body: { target: { object: 'lead', id }, body: `Note ${i}` } })).status).toBe(201);
    const page = `/admin/data/leads/${id}`;
    const older = (body: string) => body.match(/<a href="([^"]*)" rel="next">Older entries<\/a>/)?.[1]?.replaceAll('&amp;', '&');
    const notes = (body: string) => [...body.matchAll(/<div class="note-body">Note (\d+)<\/div>/g)].map((m) => Number(m[1]));
    for (const [types, firstCount] of [['', 20], ['note', 20]] as const) {
      const first = await get(t.app, types ? `${page}?types=${types}` : page, os.cookie);
      expect(first.status).toBe(200);
      expect(entries(first.body)).toHaveLength(firstCount);
      expect(first.body).not.toContain('Newest entries');
      const next = older(first.body)!;
      expect(next).toContain(`${page}?`);
      if (types) expect(next).toContain(`types=${types}`);
      const second = await get(t.app, next, os.cookie);
      expect(second.status).toBe(200);
      // Every note once across the two pages, newest first; the second page ends the history.
      expect([...notes(first.body), ...notes(second.body)]).toEqual(Array.from({ length: 25 }, (_, i) => 25 - i));
      expect(older(second.body)).toBeUndefined();
      expect(second.body).toContain(`<a href="${types ? `${page}?types=${types}` : page}#history">Newest entries</a>`);
    }
  });

  it('answers 400 with the timeline\'s message next to the control for a type it does not know, keeping the rest of the page', async () => {
    const res = await get(t.app, `${pages.lead}?types=memo`, os.cookie);
    expect(res.status).toBe(400);
    expect(fieldError(res.body, 'types')).toContain('Unknown entry type memo; one of event, note, task');
    expect(res.body).toContain('Shown lead');
    expect(entries(res.body)).toEqual([]);
  });
});
