import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';
import { addConsoleUser, get, signIn, submit, type ConsoleSession } from '../helpers/admin.js';

/*
 * Access to the data and configuration pages added after leads: members browse everything and change CRM
 * data, only administrators change configuration, and another organization's ids are 404 everywhere.
 */
let t: TestApp;
let a: Seeded;
let b: Seeded;
let admin: ConsoleSession;
let member: ConsoleSession;
const ids = { a: {} as Record<string, string>, b: {} as Record<string, string> };

async function seedData(org: Seeded, into: Record<string, string>, tag: string) {
  into.account = (await call(t.app, 'POST', '/accounts', { auth: org.auth, body: { name: `Account of ${tag}` } })).body.data.account.id;
  into.deal = (await call(t.app, 'POST', '/deals', { auth: org.auth, body: { name: `Deal of ${tag}` } })).body.data.deal.id;
  await call(t.app, 'POST', '/objects', { auth: org.auth, body: { slug: `things-${tag}`, name: `Things of ${tag}`, fields: [{ key: 'title', label: 'Title', type: 'text' }], stages: [{ key: 'open', label: 'Open' }] } });
  into.record = (await call(t.app, 'POST', `/objects/things-${tag}/records`, { auth: org.auth, body: { title: `Record of ${tag}` } })).body.data.record.id;
  into.webhook = (await call(t.app, 'POST', '/webhooks', { auth: org.auth, body: { url: 'http://127.0.0.1:9/hook', events: ['*'] } })).body.data.webhook.id;
  const test = await call(t.app, 'POST', `/webhooks/${into.webhook}/test`, { auth: org.auth });
  into.delivery = test.body.data.delivery.id;
}

beforeAll(async () => {
  t = await buildTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  [a, b] = [await seedOrg(t.ctx), await seedOrg(t.ctx)];
  admin = await signIn(t.app, await addConsoleUser(t.ctx, a.orgId, { admin: true }));
  member = await signIn(t.app, await addConsoleUser(t.ctx, a.orgId));
  await seedData(a, ids.a, 'a');
  await seedData(b, ids.b, 'b');
});
afterAll(() => t?.close());

const pages = () => [
  '/admin/data', '/admin/config', '/admin/config/marketplace',
  '/admin/data/accounts', `/admin/data/accounts/${ids.a.account}`, `/admin/data/accounts/${ids.a.account}/edit`, '/admin/data/accounts/new',
  '/admin/data/deals', '/admin/data/deals/board', `/admin/data/deals/${ids.a.deal}`, `/admin/data/deals/${ids.a.deal}/edit`, '/admin/data/deals/new',
  '/admin/data/objects/things-a', `/admin/data/objects/things-a/${ids.a.record}`, `/admin/data/objects/things-a/${ids.a.record}/edit`, '/admin/data/objects/things-a/new',
  '/admin/config/deal-stages', '/admin/config/objects', '/admin/config/objects/things-a/definition',
  '/admin/config/webhooks', `/admin/config/webhooks/${ids.a.webhook}`,
];

/** Every configuration change these pages offer, with a body that would succeed for an administrator. */
const configPosts = () => [
  ['/admin/config/deal-stages', { 'stages.0.key': 'only', 'stages.0.label': 'Only', 'stages.0.kind': 'open' }],
  ['/admin/config/objects', { slug: 'by-member', name: 'By member' }],
  ['/admin/config/objects/things-a/definition', { name: 'Renamed by member' }],
  ['/admin/config/webhooks', { url: 'http://127.0.0.1:9/member', events: '*' }],
  [`/admin/config/webhooks/${ids.a.webhook}`, { url: 'http://127.0.0.1:9/member', events: '*' }],
  [`/admin/config/webhooks/${ids.a.webhook}/test`, {}],
  [`/admin/config/webhooks/${ids.a.webhook}/disable`, {}],
  [`/admin/config/webhooks/${ids.a.webhook}/enable`, {}],
  [`/admin/config/webhooks/${ids.a.webhook}/rotate`, {}],
  [`/admin/config/webhooks/${ids.a.webhook}/deliveries/${ids.a.delivery}/resend`, {}],
  [`/admin/config/webhooks/${ids.a.webhook}/delete`, {}],
] as const;

describe('access to data and configuration pages', () => {
  it('requires sign-in for every page', async () => {
    for (const page of pages()) {
      const res = await get(t.app, page);
      expect(res.status, page).toBe(303);
      expect(res.location).toMatch(/^\/admin\/sign-in/);
    }
  });

  it('lets members browse every page without configuration controls', async () => {
    for (const page of pages()) expect((await get(t.app, page, member.cookie)).status, page).toBe(200);
    expect((await get(t.app, '/admin/config/deal-stages', member.cookie)).body).not.toContain('Save stages');
    expect((await get(t.app, '/admin/config/objects', member.cookie)).body).not.toContain('Define an object');
    expect((await get(t.app, '/admin/config/objects/things-a/definition', member.cookie)).body).not.toContain('Save definition');
    expect((await get(t.app, '/admin/config/webhooks', member.cookie)).body).not.toContain('Add endpoint');
    const endpoint = (await get(t.app, `/admin/config/webhooks/${ids.a.webhook}`, member.cookie)).body;
    for (const control of ['Send test event', 'Rotate secret', '/resend', '/delete', 'Disable']) expect(endpoint).not.toContain(control);
    for (const page of ['/admin/config/objects/new', '/admin/config/webhooks/new', `/admin/config/webhooks/${ids.a.webhook}/edit`, `/admin/config/webhooks/${ids.a.webhook}/delete`]) {
      expect((await get(t.app, page, member.cookie)).status, page).toBe(403);
    }
  });

  it('refuses every configuration change from a member with 403, changing nothing', async () => {
    for (const [url, fields] of configPosts()) {
      const res = await submit(t.app, member, url, fields);
      expect(res.status, url).toBe(403);
      expect(res.body).toContain('Administrators only');
    }
    expect((await call(t.app, 'GET', '/deal-stages', { auth: a.auth })).body.data.stages).toHaveLength(5);
    expect((await call(t.app, 'GET', '/objects/by-member', { auth: a.auth })).status).toBe(404);
    expect((await call(t.app, 'GET', '/objects/things-a', { auth: a.auth })).body.data.object.name).toBe('Things of a');
    const webhook = (await call(t.app, 'GET', `/webhooks/${ids.a.webhook}`, { auth: a.auth })).body.data.webhook;
    expect(webhook).toMatchObject({ url: 'http://127.0.0.1:9/hook', enabled: true, previousSecretExpiresAt: null });
    expect((await call(t.app, 'GET', '/webhooks', { auth: a.auth })).body.data.webhooks).toHaveLength(1);
  });

  it('lets members create and change CRM data: accounts, deals (and move them), records', async () => {
    expect((await submit(t.app, member, '/admin/data/accounts', { name: 'By a member' })).status).toBe(303);
    expect((await submit(t.app, member, `/admin/data/accounts/${ids.a.account}`, { name: 'Edited by a member' })).status).toBe(303);
    expect((await submit(t.app, member, '/admin/data/deals', { name: 'Member deal', stage: 'proposal' })).status).toBe(303);
    expect((await submit(t.app, member, `/admin/data/deals/${ids.a.deal}/stage`, { stage: 'won', back: '/admin/data/deals/board' })).status).toBe(303);
    expect((await submit(t.app, member, '/admin/data/objects/things-a', { title: 'Member record' })).status).toBe(303);
    expect((await submit(t.app, member, `/admin/data/objects/things-a/${ids.a.record}`, { title: 'Edited record', stage: 'open' })).status).toBe(303);
  });
});

describe('another organization\'s ids', () => {
  it('are 404 to read', async () => {
    const foreign = [
      `/admin/data/accounts/${ids.b.account}`, `/admin/data/accounts/${ids.b.account}/edit`,
      `/admin/data/deals/${ids.b.deal}`, `/admin/data/deals/${ids.b.deal}/edit`,
      '/admin/data/objects/things-b', '/admin/data/objects/things-b/new', `/admin/data/objects/things-b/${ids.b.record}`, `/admin/data/objects/things-a/${ids.b.record}`,
      '/admin/config/objects/things-b/definition', `/admin/config/webhooks/${ids.b.webhook}`, `/admin/config/webhooks/${ids.b.webhook}/edit`, `/admin/config/webhooks/${ids.b.webhook}/delete`,
    ];
    for (const page of foreign) {
      const res = await get(t.app, page, admin.cookie);
      expect(res.status, page).toBe(404);
      expect(res.body).not.toMatch(/of b</);
    }
  });

  it('are 404 to write, and stay as they were', async () => {
    const writes = [
      [`/admin/data/accounts/${ids.b.account}`, { name: 'Taken over' }],
      [`/admin/data/deals/${ids.b.deal}`, { name: 'Taken over', stage: 'won' }],
      [`/admin/data/deals/${ids.b.deal}/stage`, { stage: 'won', back: '/admin' }],
      ['/admin/data/objects/things-b', { title: 'Planted' }],
      [`/admin/data/objects/things-b/${ids.b.record}`, { title: 'Taken over' }],
      ['/admin/config/objects/things-b/definition', { name: 'Taken over' }],
      [`/admin/config/webhooks/${ids.b.webhook}`, { url: 'http://127.0.0.1:9/taken', events: '*' }],
      [`/admin/config/webhooks/${ids.b.webhook}/test`, {}],
      [`/admin/config/webhooks/${ids.b.webhook}/disable`, {}],
      [`/admin/config/webhooks/${ids.b.webhook}/rotate`, {}],
      [`/admin/config/webhooks/${ids.b.webhook}/deliveries/${ids.b.delivery}/resend`, {}],
      [`/admin/config/webhooks/${ids.a.webhook}/deliveries/${ids.b.delivery}/resend`, {}],
      [`/admin/config/webhooks/${ids.b.webhook}/delete`, {}],
    ] as const;
    for (const [url, fields] of writes) expect((await submit(t.app, admin, url, fields)).status, url).toBe(404);
    expect((await call(t.app, 'GET', `/accounts/${ids.b.account}`, { auth: b.auth })).body.data.account.name).toBe('Account of b');
    expect((await call(t.app, 'GET', `/deals/${ids.b.deal}`, { auth: b.auth })).body.data.deal).toMatchObject({ name: 'Deal of b', stage: 'qualification' });
    expect((await call(t.app, 'GET', `/objects/things-b/records/${ids.b.record}`, { auth: b.auth })).body.data.record.title).toBe('Record of b');
    expect((await call(t.app, 'GET', '/objects/things-b/records', { auth: b.auth })).body.data.records).toHaveLength(1);
    expect((await call(t.app, 'GET', '/objects/things-b', { auth: b.auth })).body.data.object.name).toBe('Things of b');
    expect((await call(t.app, 'GET', `/webhooks/${ids.b.webhook}`, { auth: b.auth })).body.data.webhook).toMatchObject({ url: 'http://127.0.0.1:9/hook', enabled: true, previousSecretExpiresAt: null });
  });

  it('never appear in lists, boards or the navigation', async () => {
    for (const page of ['/admin/data/accounts', '/admin/data/deals', '/admin/data/deals/board', '/admin/config/objects', '/admin/config/webhooks', '/admin/data', '/admin']) {
      const body = (await get(t.app, page, admin.cookie)).body;
      expect(body, page).not.toMatch(/of b\b/);
      expect(body, page).not.toContain(ids.b.webhook);
    }
    expect((await get(t.app, '/admin', admin.cookie)).body).toContain('<a href="/admin/data/objects/things-a">Things of a</a>');
  });
});
