import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { listEvents } from '../../src/modules/events/outbox.store.js';
import { runDueReminders } from '../../src/modules/objects/reminders.service.js';
import { findReminder } from '../../src/modules/objects/reminders.store.js';
import { purgeExpiredTrash } from '../../src/modules/shared/trash-purge.service.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';

/** The scheduler's purge with two instances on one database, and what a purge takes along or leaves. */
const DAY = 86_400_000;
const clock = new ManualClock('2026-06-01T10:00:00.000Z');
let a: TestApp;
let b: TestApp;
let s: Seeded;

beforeAll(async () => {
  a = await buildTestApp({ clock });
  b = await buildTestApp({ clock, sameDatabaseAs: a });
  s = await seedOrg(a.ctx, { rateLimitPerMinute: 1_000_000 });
});
afterAll(async () => {
  await b.close();
  await a.close();
});

const create = async (path: string, key: string, body: unknown) => {
  const res = await call(a.app, 'POST', path, { auth: s.auth, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data[key].id as string;
};

describe('trash purge', () => {
  it('two schedulers purging together remove each expired item once, with one purged event each', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 120; i += 1) ids.push(await create('/leads', 'lead', { name: `Expired ${i}` }));
    for (let i = 0; i < 30; i += 1) ids.push(await create('/accounts', 'account', { name: `Expired ${i}` }));
    for (const id of ids) {
      const path = ids.indexOf(id) < 120 ? `/leads/${id}` : `/accounts/${id}`;
      expect((await call(a.app, 'DELETE', path, { auth: s.auth })).status).toBe(200);
    }
    clock.advance(31 * DAY);
    const [byA, byB] = await Promise.all([purgeExpiredTrash(a.ctx), purgeExpiredTrash(b.ctx)]);
    expect(byA + byB).toBe(ids.length);
    const purged = (await listEvents(a.ctx.database.db, s.orgId, { limit: 10_000 })).filter((e) => e.type.endsWith('.purged')).map((e) => e.data.id);
    expect(purged.sort()).toEqual([...ids].sort());
    expect(await purgeExpiredTrash(a.ctx)).toBe(0);
  });

  it('a purged account leaves its id on deals and leads, which answers 404', async () => {
    const account = await create('/accounts', 'account', { name: 'Soon gone' });
    const deal = await create('/deals', 'deal', { name: 'Keeps its account id', accountId: account });
    const lead = await create('/leads', 'lead', { name: 'Keeps its account id', accountId: account });
    await call(a.app, 'DELETE', `/accounts/${account}?permanent=true`, { auth: s.auth });
    expect((await call(a.app, 'GET', `/deals/${deal}`, { auth: s.auth })).body.data.deal.accountId).toBe(account);
    expect((await call(a.app, 'GET', `/leads/${lead}`, { auth: s.auth })).body.data.lead.accountId).toBe(account);
    expect((await call(a.app, 'GET', `/accounts/${account}`, { auth: s.auth })).status).toBe(404);
  });

  it('a trashed record fires no reminder; a purge removes its reminder row and search entry', async () => {
    await call(a.app, 'POST', '/objects', { auth: s.auth, body: { slug: 'chores', name: 'Chores', fields: [{ key: 'title', label: 'Title', type: 'text' }, { key: 'due', label: 'Due', type: 'date', role: 'due' }] } });
    const due = new Date(clock.now().getTime() + 2 * DAY).toISOString().slice(0, 10);
    const id = await create('/objects/chores/records', 'record', { title: 'Sweep the porch', due });
    expect(await findReminder(a.ctx.database.db, id)).toBeDefined();
    await call(a.app, 'DELETE', `/objects/chores/records/${id}`, { auth: s.auth });
    expect(await findReminder(a.ctx.database.db, id)).toBeUndefined();
    await call(a.app, 'POST', `/objects/chores/records/${id}/restore`, { auth: s.auth });
    expect(await findReminder(a.ctx.database.db, id)).toBeDefined();
    const gone = await call(a.app, "DELETE", `/objects/chores/records/${id}?permanent=true`, { auth: s.auth });
    expect(gone.status, JSON.stringify(gone.body)).toBe(200);
    expect(await findReminder(a.ctx.database.db, id)).toBeUndefined();
    const other = await create('/objects/chores/records', 'record', { title: 'Sweep the yard' });
    const found = await call(a.app, 'GET', '/objects/chores/records?q=sweep', { auth: s.auth });
    expect(found.body.data.records.map((r: { id: string }) => r.id)).toEqual([other]);
    expect(found.body.data.pagination.total).toBe(1);
  });

  it('a trashed record whose reminder already fired keeps it until the purge removes both', async () => {
    const today = clock.now().toISOString().slice(0, 10);
    const id = await create('/objects/chores/records', 'record', { title: 'Fired before the trash', due: today });
    clock.set(`${today}T09:30:00.000Z`);
    await runDueReminders(a.ctx);
    expect((await findReminder(a.ctx.database.db, id))?.firedAt).not.toBeNull();
    await call(a.app, 'DELETE', `/objects/chores/records/${id}`, { auth: s.auth });
    expect((await findReminder(a.ctx.database.db, id))?.firedAt).not.toBeNull();
    clock.advance(31 * DAY);
    expect(await purgeExpiredTrash(a.ctx)).toBeGreaterThanOrEqual(1);
    expect(await findReminder(a.ctx.database.db, id)).toBeUndefined();
    expect((await call(a.app, 'POST', `/objects/chores/records/${id}/restore`, { auth: s.auth })).status).toBe(404);
  });
});

describe('a purge removes what names the item', () => {
  const keyed = (key: string) => ({ 'idempotency-key': key });
  const storedKeys = async (keys: string[]) => (await a.ctx.database.db.selectFrom('idempotency_keys').select('key').where('organization_id', '=', s.orgId).where('key', 'in', keys).execute()).map((r) => r.key).sort();

  it('its earlier events, the stored responses naming it (a batch\'s too), and an erasure afterwards finds nothing left', async () => {
    const single = await call(a.app, 'POST', '/leads', { auth: s.auth, body: { name: 'Vera Purgedname', email: 'vera@example.com' }, headers: keyed('purge-single') });
    const vera = single.body.data.lead.id as string;
    const batch = await call(a.app, 'POST', '/leads/batch', { auth: s.auth, body: { items: [{ name: 'Batch Purgedname', phoneNumber: '+14155550166' }, { name: 'Stays' }] }, headers: keyed('purge-batch') });
    const [gone, stays] = batch.body.data.results.map((r: { lead: { id: string } }) => r.lead.id) as string[];
    await call(a.app, 'PATCH', `/leads/${vera}`, { auth: s.auth, body: { title: 'Secret title' } });
    expect(await storedKeys(['purge-single', 'purge-batch'])).toEqual(['purge-batch', 'purge-single']);

    for (const id of [vera, gone]) expect((await call(a.app, 'DELETE', `/leads/${id}?permanent=true`, { auth: s.auth })).status).toBe(200);
    expect((await listEvents(a.ctx.database.db, s.orgId, { objectId: vera })).map((e) => e.type)).toEqual(['lead.purged']);
    expect((await listEvents(a.ctx.database.db, s.orgId, { objectId: gone })).map((e) => e.type)).toEqual(['lead.purged']);
    expect((await listEvents(a.ctx.database.db, s.orgId, { objectId: stays })).map((e) => e.type)).toEqual(['lead.created']);
    expect(await storedKeys(['purge-single', 'purge-batch'])).toEqual([]);
    const named = await a.ctx.database.db.selectFrom('events').select('id').where('organization_id', '=', s.orgId).where('payload', 'like', '%Purgedname%').execute();
    expect(named).toEqual([]);

    const erasure = await call(a.app, 'POST', '/privacy/erasures', { auth: s.auth, body: { email: 'vera@example.com', phoneNumber: '+14155550166' } });
    expect(erasure.body.data.erasure.matched).toEqual({ leads: 0, accounts: 0, deals: 0, records: 0 });
  });

  it('a record\'s contact-index rows, at once and by the scheduler', async () => {
    await call(a.app, 'POST', '/objects', { auth: s.auth, body: { slug: 'tickets', name: 'Tickets', fields: [{ key: 'title', label: 'Title', type: 'text' }, { key: 'contact', label: 'Contact', type: 'email' }] } });
    const contactRows = async (id: string) => (await a.ctx.database.db.selectFrom('record_contacts').select('bidx').where('record_id', '=', id).execute()).length;
    const now = await create('/objects/tickets/records', 'record', { title: 'Now', contact: 'zoe@example.com' });
    const later = await create('/objects/tickets/records', 'record', { title: 'Later', contact: 'zed@example.com' });
    expect([await contactRows(now), await contactRows(later)]).toEqual([1, 1]);
    await call(a.app, 'DELETE', `/objects/tickets/records/${now}?permanent=true`, { auth: s.auth });
    await call(a.app, 'DELETE', `/objects/tickets/records/${later}`, { auth: s.auth });
    expect([await contactRows(now), await contactRows(later)]).toEqual([0, 1]);
    clock.advance(31 * DAY);
    await purgeExpiredTrash(a.ctx, s.orgId);
    expect(await contactRows(later)).toBe(0);
  });
});
