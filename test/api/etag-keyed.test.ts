import { hash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/lib/canonical-json.js';
import { call } from '../helpers/http.js';
import { addKey, seedOrg, type Seeded } from '../helpers/seed.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';

// A key that may write leads but not read them gets the whole lead's ETag beside the minimal view: the tag is
// keyed (crypto/entity-tag.ts), so knowing it lets that key check no guess of the fields it may not read.

let t: TestApp;
let s: Seeded;

beforeAll(async () => {
  t = await buildTestApp();
  s = await seedOrg(t.ctx);
});
afterAll(() => t.close());

/** The tag an unkeyed digest of the item would be: what anyone holding a guess of every field could compute. */
const unkeyed = (item: unknown) => `"${hash('sha256', canonicalJson(item), 'base64url').slice(0, 27)}"`;

async function privateLead(email: string) {
  const res = await call(t.app, 'POST', '/leads', { auth: s.auth, body: { name: 'Grace', email, company: 'Private Co', status: 'NEW' } });
  expect(res.status).toBe(201);
  return res.body.data.lead as { id: string };
}

const readWhole = async (id: string) => {
  const res = await call(t.app, 'GET', `/leads/${id}`, { auth: s.auth });
  return { lead: res.body.data.lead as Record<string, unknown>, etag: res.headers.etag as string };
};

describe('keyed ETags for a key that may write but not read', () => {
  it('the minimal view carries the whole lead\'s tag, which no digest of the whole lead (even a perfect guess) reproduces, and it works as If-Match', async () => {
    const writer = (await addKey(t.ctx, s.orgId, ['leads:write'])).auth;
    const { id } = await privateLead('grace@private.example');
    const written = await call(t.app, 'PATCH', `/leads/${id}`, { auth: writer, body: { title: 'CTO' } });
    expect(written.status).toBe(200);
    expect(Object.keys(written.body.data.lead).sort()).toEqual(['deletedAt', 'id', 'updatedAt']);
    const whole = await readWhole(id);
    expect(written.headers.etag).toBe(whole.etag);
    expect(written.headers.etag).not.toBe(unkeyed(whole.lead));
    expect(written.headers.etag).not.toBe(unkeyed(written.body.data.lead));

    const next = await call(t.app, 'PATCH', `/leads/${id}`, { auth: writer, body: { title: 'CEO' }, headers: { 'if-match': written.headers.etag as string } });
    expect(next.status).toBe(200);
    const stale = await call(t.app, 'PATCH', `/leads/${id}`, { auth: writer, body: { title: 'CFO' }, headers: { 'if-match': written.headers.etag as string } });
    expect(stale.status).toBe(412);
    expect(Object.keys(stale.body.data.lead).sort()).toEqual(['deletedAt', 'id', 'updatedAt']);
    const current = await readWhole(id);
    expect(stale.headers.etag).toBe(current.etag);
    expect(stale.headers.etag).toBe(next.headers.etag);
    expect(stale.headers.etag).not.toBe(unkeyed(current.lead));
  });

  it('a batch result\'s etag is keyed the same way, and is the next item\'s ifMatch', async () => {
    const writer = (await addKey(t.ctx, s.orgId, ['leads:write'])).auth;
    const { id } = await privateLead('ada@private.example');
    const first = await call(t.app, 'PATCH', '/leads/batch', { auth: writer, body: { items: [{ id, title: 'CTO' }] } });
    const [result] = first.body.data.results;
    expect(result).toMatchObject({ status: 200, lead: { id }, etag: (await readWhole(id)).etag });
    expect(result.etag).not.toBe(unkeyed((await readWhole(id)).lead));
    const second = await call(t.app, 'PATCH', '/leads/batch', { auth: writer, body: { items: [{ id, title: 'CEO', ifMatch: result.etag }, { id, title: 'CFO', ifMatch: result.etag }] } });
    expect(second.body.data.results.map((r: { status: number }) => r.status)).toEqual([200, 412]);
  });
});

describe('tags across instances', () => {
  it('another instance of the deployment (its own context, the same database) answers the same tag, and takes it as If-Match', async () => {
    const other = await buildTestApp({ sameDatabaseAs: t });
    try {
      const { id } = await privateLead('lin@private.example');
      const here = await readWhole(id);
      const there = await call(other.app, 'GET', `/leads/${id}`, { auth: s.auth });
      expect(there.headers.etag).toBe(here.etag);
      const written = await call(other.app, 'PATCH', `/leads/${id}`, { auth: s.auth, body: { title: 'CTO' }, headers: { 'if-match': here.etag } });
      expect(written.status).toBe(200);
      expect(written.headers.etag).toBe((await readWhole(id)).etag);
    } finally {
      await other.close();
    }
  });
});
