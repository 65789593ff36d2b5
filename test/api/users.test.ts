import { createClient } from '@crm/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { addKey, addUser, seedOrg, type Seeded } from '../helpers/seed.js';
import { buildAppWithSharedSchemas, buildTestApp, type TestApp } from '../helpers/test-app.js';
import { call, expectError } from '../helpers/http.js';
import { listen } from '../helpers/mcp.js';

/** GET /users and /users/{id} (contract §9): who can own a lead or deal, with names and work e-mails. */
let t: TestApp;
let s: Seeded;
let other: Seeded;

beforeAll(async () => {
  t = await buildTestApp();
  s = await seedOrg(t.ctx);
  other = await seedOrg(t.ctx);
});
afterAll(() => t.close());

describe('users', () => {
  it('lists the organization\'s users newest first, paginated, with name, e-mail, role, active and createdAt', async () => {
    const rep = await addUser(t.ctx, s.orgId, 'Grace Rep');
    const res = await call(t.app, 'GET', '/users?limit=1', { auth: s.auth });
    expect(res.status).toBe(200);
    expect(res.body.data.pagination).toMatchObject({ page: 1, limit: 1, total: 2, totalPages: 2, hasMore: true });
    expect(res.body.data.users).toEqual([
      { id: rep, name: 'Grace Rep', email: expect.stringMatching(/^rep\d+\..+@example\.com$/), role: 'member', active: true, createdAt: expect.stringMatching(/Z$/) },
    ]);
    const second = await call(t.app, 'GET', '/users?page=2&limit=1', { auth: s.auth });
    expect(second.body.data.users).toEqual([expect.objectContaining({ id: s.userId, role: 'member' })]);
    const all = await call(t.app, 'GET', '/users', { auth: s.auth });
    expect(all.body.data.users.map((u: { id: string }) => u.id)).toEqual([rep, s.userId]);
  });

  it('gets one user with an ETag; an administrator has role admin; another organization\'s user is 404', async () => {
    await t.ctx.database.db.updateTable('users').set({ is_admin: 1 }).where('id', '=', s.userId).execute();
    const res = await call(t.app, 'GET', `/users/${s.userId}`, { auth: s.auth });
    expect(res.status).toBe(200);
    expect(res.body.data.user).toMatchObject({ id: s.userId, role: 'admin', active: true, email: expect.stringContaining('@example.com') });
    expect(res.headers.etag).toEqual(expect.any(String));
    expect((await call(t.app, 'GET', `/users/${s.userId}`, { auth: s.auth, headers: { 'if-none-match': res.headers.etag as string } })).status).toBe(304);
    expectError(await call(t.app, 'GET', `/users/${other.userId}`, { auth: s.auth }), 404, 'NOT_FOUND');
    expect((await call(t.app, 'GET', '/users', { auth: other.auth })).body.data.users.map((u: { id: string }) => u.id)).toEqual([other.userId]);
  });

  it('needs users:read (no other scope implies it) and refuses unknown query parameters', async () => {
    const without = await addKey(t.ctx, s.orgId, ['leads:read', 'leads:write', 'objects:admin']);
    expect(expectError(await call(t.app, 'GET', '/users', { auth: without.auth }), 403, 'INSUFFICIENT_SCOPE')).toEqual([]);
    const only = await addKey(t.ctx, s.orgId, ['users:read']);
    expect((await call(t.app, 'GET', '/users', { auth: only.auth })).status).toBe(200);
    const errors = expectError(await call(t.app, 'GET', '/users?team=sales', { auth: only.auth }), 400, 'VALIDATION_FAILED');
    expect(errors.map((e) => e.field)).toEqual(['team']);
  });

  it('never writes a user\'s e-mail to the log', async () => {
    const lines: string[] = [];
    const stream = new Writable({ write: (chunk, _enc, done) => (lines.push(String(chunk)), done()) });
    const logged = await buildAppWithSharedSchemas({ ...t.ctx, config: { ...t.ctx.config, logLevel: 'debug' } }, { logger: { stream } });
    try {
      const res = await logged.inject({ method: 'GET', url: '/api/public/v1/users', headers: s.auth });
      expect(res.statusCode).toBe(200);
      const emails = (JSON.parse(res.body).data.users as { email: string }[]).map((u) => u.email);
      expect(emails.length).toBeGreaterThan(0);
      expect(lines.length).toBeGreaterThan(0);
      for (const email of emails) expect(lines.join('')).not.toContain(email);
    } finally {
      await logged.close();
    }
  });

  it('the SDK lists and gets users', async () => {
    const crm = createClient({ baseUrl: await listen(t), apiKey: other.key });
    const listed = [];
    for await (const user of crm.users.iterate()) listed.push(user);
    expect(listed.map((u) => u.id)).toEqual([other.userId]);
    expect(await crm.users.get(other.userId)).toEqual(listed[0]);
  });
});
