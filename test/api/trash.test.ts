import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { listEvents } from '../../src/modules/events/outbox.store.js';
import { purgeExpiredTrash } from '../../src/modules/shared/trash-purge.service.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { addKey, seedOrg, type Seeded } from '../helpers/seed.js';
import { call, expectError } from '../helpers/http.js';

/** Delete, trash lists, restore and purge (contract §7), the same for every trashable resource. */
const DAY = 86_400_000;
const clock = new ManualClock('2026-06-01T10:00:00.000Z');
let t: TestApp;
let s: Seeded;

beforeAll(async () => {
  t = await buildTestApp({ clock, env: { TRASH_RETENTION_DAYS: '30' } });
  s = await seedOrg(t.ctx, { rateLimitPerMinute: 1_000_000 });
  const object = await call(t.app, 'POST', '/objects', { auth: s.auth, body: { slug: 'gadgets', name: 'Gadgets', fields: [{ key: 'title', label: 'Title', type: 'text' }] } });
  expect(object.status).toBe(201);
});
afterAll(() => t.close());

interface Resource {
  object: 'lead' | 'account' | 'deal' | 'record';
  path: string;
  list: string;
  body(name: string): Record<string, unknown>;
}

const RESOURCES: Resource[] = [
  { object: 'lead', path: '/leads', list: 'leads', body: (name) => ({ name }) },
  { object: 'account', path: '/accounts', list: 'accounts', body: (name) => ({ name }) },
  { object: 'deal', path: '/deals', list: 'deals', body: (name) => ({ name }) },
  { object: 'record', path: '/objects/gadgets/records', list: 'records', body: (name) => ({ title: name }) },
];

async function create(r: Resource, name: string): Promise<string> {
  const res = await call(t.app, 'POST', r.path, { auth: s.auth, body: r.body(name) });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data[r.object].id;
}

const listIds = async (r: Resource, query = '') => {
  const res = await call(t.app, 'GET', `${r.path}?limit=100${query}`, { auth: s.auth });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { ids: res.body.data[r.list].map((x: { id: string }) => x.id) as string[], total: res.body.data.pagination.total as number };
};
const eventTypes = async (id: string) => (await listEvents(t.ctx.database.db, s.orgId, { objectId: id })).map((e) => e.type);

describe.each(RESOURCES)('trash of $list', (r) => {
  it('DELETE moves the item to the trash: gone from reads, lists and searches; back everywhere after restore', async () => {
    const keep = await create(r, 'Quokka keeper');
    const id = await create(r, 'Quokka trashed');
    clock.advance(1000);
    const deleted = await call(t.app, 'DELETE', `${r.path}/${id}`, { auth: s.auth });
    expect(deleted.status).toBe(200);
    expect(deleted.body.data[r.object]).toMatchObject({ id, deletedAt: clock.now().toISOString() });

    expectError(await call(t.app, 'GET', `${r.path}/${id}`, { auth: s.auth }), 404, 'NOT_FOUND');
    expectError(await call(t.app, 'PATCH', `${r.path}/${id}`, { auth: s.auth, body: r.body('Renamed') }), 404, 'NOT_FOUND');
    expectError(await call(t.app, 'DELETE', `${r.path}/${id}`, { auth: s.auth }), 404, 'NOT_FOUND');
    for (const query of ['', '&q=quokka', '&q=Quo', '&q=qu', '&q=q']) {
      const { ids, total } = await listIds(r, query);
      expect(ids, query).toContain(keep);
      expect(ids, query).not.toContain(id);
      expect(total, query).toBe(ids.length);
    }
    const trash = await listIds(r, '&deleted=true');
    expect(trash.ids).toContain(id);
    expect(trash.ids).not.toContain(keep);

    const restored = await call(t.app, 'POST', `${r.path}/${id}/restore`, { auth: s.auth });
    expect(restored.status).toBe(200);
    expect(restored.body.data[r.object]).toMatchObject({ id, deletedAt: null });
    expect((await call(t.app, 'GET', `${r.path}/${id}`, { auth: s.auth })).body.data[r.object].deletedAt).toBeNull();
    for (const query of ['', '&q=quokka', '&q=qu']) expect((await listIds(r, query)).ids).toContain(id);
    expect((await listIds(r, '&deleted=true')).ids).not.toContain(id);
    expectError(await call(t.app, 'POST', `${r.path}/${id}/restore`, { auth: s.auth }), 404, 'NOT_FOUND');
    expect(await eventTypes(id)).toEqual([`${r.object}.created`, `${r.object}.deleted`, `${r.object}.restored`]);
  });

  it('?deleted=true lists the trash newest deletion first', async () => {
    const first = await create(r, 'Deleted first');
    const second = await create(r, 'Deleted second');
    await call(t.app, 'DELETE', `${r.path}/${second}`, { auth: s.auth });
    clock.advance(1000);
    await call(t.app, 'DELETE', `${r.path}/${first}`, { auth: s.auth });
    const { ids } = await listIds(r, '&deleted=true');
    expect(ids.indexOf(first)).toBeLessThan(ids.indexOf(second));
    expect(ids.indexOf(first)).toBe(0);
  });

  it('restores within the retention period only (the boundary included)', async () => {
    const atBoundary = await create(r, 'Boundary');
    const late = await create(r, 'Too late');
    await call(t.app, 'DELETE', `${r.path}/${atBoundary}`, { auth: s.auth });
    await call(t.app, 'DELETE', `${r.path}/${late}`, { auth: s.auth });
    clock.advance(30 * DAY);
    expect((await call(t.app, 'POST', `${r.path}/${atBoundary}/restore`, { auth: s.auth })).status).toBe(200);
    clock.advance(1);
    expectError(await call(t.app, 'POST', `${r.path}/${late}/restore`, { auth: s.auth }), 404, 'NOT_FOUND');
  });

  it('?permanent=true removes a live or trashed item at once; restore is then 404', async () => {
    const live = await create(r, 'Permanent live');
    const trashed = await create(r, 'Permanent trashed');
    await call(t.app, 'DELETE', `${r.path}/${trashed}`, { auth: s.auth });
    for (const id of [live, trashed]) {
      const res = await call(t.app, 'DELETE', `${r.path}/${id}?permanent=true`, { auth: s.auth });
      expect(res.status).toBe(200);
      expect(res.body.data[r.object].id).toBe(id);
      expectError(await call(t.app, 'POST', `${r.path}/${id}/restore`, { auth: s.auth }), 404, 'NOT_FOUND');
      expectError(await call(t.app, 'DELETE', `${r.path}/${id}?permanent=true`, { auth: s.auth }), 404, 'NOT_FOUND');
      expect((await listIds(r, '&deleted=true')).ids).not.toContain(id);
      expect((await eventTypes(id)).at(-1)).toBe(`${r.object}.purged`);
    }
  });

  it('the scheduler purges what was trashed longer than the retention, and nothing else', async () => {
    const old = await create(r, 'Old trash');
    const recent = await create(r, 'Recent trash');
    await call(t.app, 'DELETE', `${r.path}/${old}`, { auth: s.auth });
    clock.advance(10 * DAY);
    await call(t.app, 'DELETE', `${r.path}/${recent}`, { auth: s.auth });
    clock.advance(20 * DAY + 1);
    await purgeExpiredTrash(t.ctx);
    const trash = (await listIds(r, '&deleted=true')).ids;
    expect(trash).not.toContain(old);
    expect(trash).toContain(recent);
    expect((await eventTypes(old)).filter((type) => type.endsWith('.purged'))).toHaveLength(1);
    expect(await eventTypes(recent)).not.toContain(`${r.object}.purged`);
  });

  it('deleting and restoring need the resource write scope; another organization gets 404', async () => {
    const id = await create(r, 'Guarded');
    const readOnly = await addKey(t.ctx, s.orgId, [`${r.list}:read` as never]);
    expectError(await call(t.app, 'DELETE', `${r.path}/${id}`, { auth: readOnly.auth }), 403, 'INSUFFICIENT_SCOPE');
    const other = await seedOrg(t.ctx);
    if (r.object === 'record') {
      await call(t.app, 'POST', '/objects', { auth: other.auth, body: { slug: 'gadgets', name: 'Gadgets', fields: [{ key: 'title', label: 'Title', type: 'text' }] } });
    }
    expectError(await call(t.app, 'DELETE', `${r.path}/${id}`, { auth: other.auth }), 404, 'NOT_FOUND');
    expectError(await call(t.app, 'DELETE', `${r.path}/${id}?permanent=true`, { auth: other.auth }), 404, 'NOT_FOUND');
    await call(t.app, 'DELETE', `${r.path}/${id}`, { auth: s.auth });
    expectError(await call(t.app, 'POST', `${r.path}/${id}/restore`, { auth: other.auth }), 404, 'NOT_FOUND');
    expect((await listIds(r, '&deleted=true')).ids).toContain(id);
  });
});
