import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deactivateUser, reactivateUser } from '../../src/admin/auth/activation.service.js';
import { createApiKey } from '../../src/modules/orgs/orgs.service.js';
import { setAssignmentRules } from '../../src/modules/orgs/rules.service.js';
import { addUser, seedOrg, type Seeded } from '../helpers/seed.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { call, expectError } from '../helpers/http.js';
import { addConsoleUser, attemptSignIn, get, signIn } from '../helpers/admin.js';
import { databaseEnv } from '../helpers/processes.js';
import { runCli } from '../helpers/cli.js';
import { eventually } from '../helpers/receiver.js';

/** Deactivated users (contract §9 `active`): no sign-in, no API keys, no new work; existing work stays theirs. */
let t: TestApp;
let s: Seeded;

beforeAll(async () => {
  t = await buildTestApp();
  s = await seedOrg(t.ctx, { rateLimitPerMinute: 1000 });
});
afterAll(() => t.close());

const ids = (res: { body: any }) => res.body.data.users.map((u: { id: string }) => u.id);
const keyOf = async (userId: string) => {
  const key = await createApiKey(t.ctx, { organizationId: s.orgId, userId, scopes: ['users:read', 'leads:read'], name: 'personal', rateLimitPerMinute: null });
  return { authorization: `Bearer ${key.key}` };
};

describe('users deactivation', () => {
  it('shows active false on GET /users and /users/{id}, and the active filter selects on it', async () => {
    const rep = await addUser(t.ctx, s.orgId, 'Leaving Rep');
    await deactivateUser(t.ctx, s.orgId, rep, null);
    expect((await call(t.app, 'GET', `/users/${rep}`, { auth: s.auth })).body.data.user).toMatchObject({ id: rep, active: false });
    expect(ids(await call(t.app, 'GET', '/users?active=false', { auth: s.auth }))).toEqual([rep]);
    expect(ids(await call(t.app, 'GET', '/users?active=true', { auth: s.auth }))).not.toContain(rep);
    await reactivateUser(t.ctx, s.orgId, rep);
    expect((await call(t.app, 'GET', `/users/${rep}`, { auth: s.auth })).body.data.user.active).toBe(true);
    expect(ids(await call(t.app, 'GET', '/users?active=false', { auth: s.auth }))).toEqual([]);
  });

  it('the user\'s API keys answer 401 on the very next request (the key lookup cache is emptied) until reactivation', async () => {
    const rep = await addUser(t.ctx, s.orgId);
    const auth = await keyOf(rep);
    for (let i = 0; i < 2; i++) expect((await call(t.app, 'GET', '/users', { auth })).status).toBe(200);
    await deactivateUser(t.ctx, s.orgId, rep, null);
    const revoked = await call(t.app, 'GET', '/users', { auth });
    expectError(revoked, 401, 'UNAUTHORIZED');
    expect(JSON.stringify(revoked.body)).not.toContain(rep);
    expect((await call(t.app, 'GET', '/users', { auth: s.auth })).status).toBe(200);
    await reactivateUser(t.ctx, s.orgId, rep);
    expect((await call(t.app, 'GET', '/users', { auth })).status).toBe(200);
  });

  it('ends the user\'s console sessions at once and refuses their sign-in like a wrong password', async () => {
    const user = await addConsoleUser(t.ctx, s.orgId);
    const session = await signIn(t.app, user);
    const ended = await deactivateUser(t.ctx, s.orgId, user.id, null);
    expect(ended).toBe(1);
    expect((await get(t.app, '/admin', session.cookie)).status).not.toBe(200);
    const refused = await attemptSignIn(t.app, user.email, user.password);
    expect(refused.status).toBe(401);
    expect(refused.sessionCookie).toBeUndefined();
    await reactivateUser(t.ctx, s.orgId, user.id);
    expect((await attemptSignIn(t.app, user.email, user.password)).status).toBe(303);
  });

  it('refuses an inactive ownerId or assigneeId on create and update (400 naming the field); existing assignments stay', async () => {
    const rep = await addUser(t.ctx, s.orgId);
    const lead = (await call(t.app, 'POST', '/leads', { auth: s.auth, body: { name: 'Kept', ownerId: rep } })).body.data.lead;
    const task = (await call(t.app, 'POST', '/tasks', { auth: s.auth, body: { title: 'Kept', assigneeId: rep } })).body.data.task;
    await deactivateUser(t.ctx, s.orgId, rep, null);
    const refusals = await Promise.all([
      call(t.app, 'POST', '/leads', { auth: s.auth, body: { name: 'New', ownerId: rep } }),
      call(t.app, 'POST', '/accounts', { auth: s.auth, body: { name: 'New', ownerId: rep } }),
      call(t.app, 'POST', '/deals', { auth: s.auth, body: { name: 'New', ownerId: rep } }),
      call(t.app, 'POST', '/tasks', { auth: s.auth, body: { title: 'New', assigneeId: rep } }),
      call(t.app, 'PATCH', `/tasks/${task.id}`, { auth: s.auth, body: { assigneeId: rep } }),
    ]);
    const fields = ['ownerId', 'ownerId', 'ownerId', 'assigneeId', 'assigneeId'];
    refusals.forEach((res, i) => expect(expectError(res, 400, 'VALIDATION_FAILED')).toEqual([expect.objectContaining({ field: fields[i], message: expect.stringContaining('active user') })]));
    expect((await call(t.app, 'GET', `/leads/${lead.id}`, { auth: s.auth })).body.data.lead.ownerId).toBe(rep);
    const renamed = await call(t.app, 'PATCH', `/leads/${lead.id}`, { auth: s.auth, body: { name: 'Renamed' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.data.lead.ownerId).toBe(rep);
    expect((await call(t.app, 'PATCH', `/tasks/${task.id}`, { auth: s.auth, body: { title: 'Still theirs' } })).body.data.task.assigneeId).toBe(rep);
  });

  it('assignment rules skip inactive users: a user rule assigns nobody, a round robin turns among the active', async () => {
    const o = await seedOrg(t.ctx, { rateLimitPerMinute: 1000 });
    const [fixed, one, two, three] = [await addUser(t.ctx, o.orgId), await addUser(t.ctx, o.orgId), await addUser(t.ctx, o.orgId), await addUser(t.ctx, o.orgId)];
    await setAssignmentRules(t.ctx.database, o.orgId, {
      rules: [
        { id: 'fixed', match: { source: 'WEBSITE' }, assign: { type: 'user', userId: fixed } },
        { id: 'rr', match: {}, assign: { type: 'round_robin', userIds: [one, two, three] } },
      ],
    }, new Date());
    await deactivateUser(t.ctx, o.orgId, fixed, null);
    await deactivateUser(t.ctx, o.orgId, two, null);
    const owner = async (body: object) => (await call(t.app, 'POST', '/leads', { auth: o.auth, body })).body.data.lead.ownerId as string | null;
    expect(await owner({ name: 'Web', source: 'WEBSITE' })).toBeNull();
    const owners = [];
    for (let i = 0; i < 4; i++) owners.push(await owner({ name: `RR ${i}` }));
    expect(owners.filter((id) => id === one)).toHaveLength(2);
    expect(owners.filter((id) => id === three)).toHaveLength(2);
    await deactivateUser(t.ctx, o.orgId, one, null);
    await deactivateUser(t.ctx, o.orgId, three, null);
    expect(await owner({ name: 'Nobody left' })).toBeNull();
  });

  it('keeps an active administrator: nobody deactivates themself or the last active administrator', async () => {
    const o = await seedOrg(t.ctx);
    const admin = await addConsoleUser(t.ctx, o.orgId, { admin: true, name: 'Only Admin' });
    await expect(deactivateUser(t.ctx, o.orgId, admin.id, admin.id)).rejects.toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('yourself') });
    await expect(deactivateUser(t.ctx, o.orgId, admin.id, null)).rejects.toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('last active administrator') });
    const second = await addConsoleUser(t.ctx, o.orgId, { admin: true });
    const both = await Promise.allSettled([deactivateUser(t.ctx, o.orgId, admin.id, second.id), deactivateUser(t.ctx, o.orgId, second.id, admin.id)]);
    expect(both.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
    await expect(deactivateUser(t.ctx, o.orgId, 'no-such-user', null)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('makes keys only for an active user of the key\'s own organization (crm key create --user)', async () => {
    const other = await seedOrg(t.ctx);
    const stranger = await addUser(t.ctx, other.orgId, 'Other Org Rep');
    const env = { ...databaseEnv(t), LOG_LEVEL: 'silent' };
    const crossed = await runCli(['--json', 'key', 'create', '--org', s.orgId, '--user', stranger, '--scopes', 'leads:read'], env);
    expect(crossed.code).toBe(1);
    expect(crossed.stdout + crossed.stderr).toContain(`user ${stranger} is not in this organization`);
    const leaving = await addUser(t.ctx, s.orgId, 'Leaving Rep');
    await deactivateUser(t.ctx, s.orgId, leaving, null);
    await expect(keyOf(leaving)).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await reactivateUser(t.ctx, s.orgId, leaving);
    expect((await call(t.app, 'GET', '/users', { auth: await keyOf(leaving) })).status).toBe(200);
  }, 120_000);

  it('crm user deactivate|reactivate --org --email: the key stops and starts working, list shows it', async () => {
    const env = { ...databaseEnv(t), LOG_LEVEL: 'silent' };
    const user = await addConsoleUser(t.ctx, s.orgId);
    const auth = await keyOf(user.id);
    expect((await call(t.app, 'GET', '/users', { auth })).status).toBe(200);
    const off = await runCli(['--json', 'user', 'deactivate', '--org', s.orgId, '--email', user.email], env);
    expect(off.code, off.stderr).toBe(0);
    expect(JSON.parse(off.stdout.trim().split('\n').at(-1)!)).toEqual({ id: user.id, active: false, sessionsEnded: 0 });
    expect(off.stdout + off.stderr).not.toContain(user.email);
    // Another process made the change: on PostgreSQL its notification reaches this instance shortly after.
    await eventually(async () => expectError(await call(t.app, 'GET', '/users', { auth }), 401, 'UNAUTHORIZED'));
    const listed = await runCli(['user', 'list', '--org', s.orgId], env);
    expect(listed.stdout).toMatch(new RegExp(`${user.id} .*deactivated`));
    expect((await runCli(['user', 'reactivate', '--org', s.orgId, '--email', user.email], env)).code).toBe(0);
    await eventually(async () => expect((await call(t.app, 'GET', '/users', { auth })).status).toBe(200));
    const stranger = await runCli(['--json', 'user', 'deactivate', '--org', s.orgId, '--email', 'nobody@example.com'], env);
    expect(stranger.code).toBe(1);
  }, 120_000);
});
