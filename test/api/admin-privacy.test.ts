import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/test-app.js';
import type { Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';
import { addConsoleUser, fieldError, get, openConsole, signIn, submit, type ConsoleSession } from '../helpers/admin.js';

/** Configuration › Privacy: an administrator erases a person after confirming, sees the receipt and the past erasures. */
let t: TestApp;
let a: Seeded;
let admin: ConsoleSession;
let member: ConsoleSession;

beforeAll(async () => {
  ({ t, a, s: admin } = await openConsole({ admin: true, name: 'Ada Admin' }));
  member = await signIn(t.app, await addConsoleUser(t.ctx, a.orgId, { name: 'Max Member' }));
});
afterAll(() => t?.close());

describe('console erasure', () => {
  it('erases nothing until the confirmation is ticked, then shows the receipt and lists it', async () => {
    const lead = await call(t.app, 'POST', '/leads', { auth: a.auth, body: { name: 'Console Subject', email: 'console.subject@example.com' } });
    const unconfirmed = await submit(t.app, admin, '/admin/config/privacy', { email: 'console.subject@example.com', reason: 'ticket 7' });
    expect(unconfirmed.status).toBe(400);
    expect(fieldError(unconfirmed.body, 'confirm')).toBe('Error: Confirmation must be ticked to erase');
    expect(unconfirmed.body).toContain('value="console.subject@example.com"');
    expect((await call(t.app, 'GET', `/leads/${lead.body.data.lead.id}`, { auth: a.auth })).status).toBe(200);

    const done = await submit(t.app, admin, '/admin/config/privacy', { email: 'console.subject@example.com', reason: 'ticket 7', confirm: 'on' });
    expect(done.status).toBe(303);
    const page = await get(t.app, done.location!, admin.cookie);
    expect(page.body).toContain('Erasure receipt');
    expect(page.body).toContain('1 lead, 0 accounts, 0 deals, 0 records');
    expect(page.body).not.toContain('console.subject@example.com');
    expect((await call(t.app, 'GET', `/leads/${lead.body.data.lead.id}`, { auth: a.auth })).status).toBe(404);
    expect((await get(t.app, '/admin/config/privacy', admin.cookie)).body).toContain('ticket 7');
  });

  it('refuses an empty or malformed value in place', async () => {
    const empty = await submit(t.app, admin, '/admin/config/privacy', { confirm: 'on' });
    expect(empty.status).toBe(400);
    expect(fieldError(empty.body, 'email')).toContain('send email or phoneNumber');
    const bad = await submit(t.app, admin, '/admin/config/privacy', { phoneNumber: '12', confirm: 'on' });
    expect(fieldError(bad.body, 'phoneNumber')).toBeDefined();
  });

  it('is listed under Configuration, and only administrators may erase', async () => {
    expect((await get(t.app, '/admin/config', admin.cookie)).body).toContain('href="/admin/config/privacy"');
    const page = await get(t.app, '/admin/config/privacy', member.cookie);
    expect(page.body).toContain('Only administrators can erase.');
    expect((await submit(t.app, member, '/admin/config/privacy', { email: 'x@example.com', confirm: 'on' })).status).toBe(403);
  });
});
