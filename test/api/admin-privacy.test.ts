import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildAppWithSharedSchemas, type TestApp } from '../helpers/test-app.js';
import type { Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';
import { addConsoleUser, fieldError, get, openConsole, post, signIn, submit, type ConsoleSession } from '../helpers/admin.js';
import { localDate } from '../../src/lib/dates.js';

/**
 * Configuration › Privacy: an administrator downloads a person's export (the API's access-request file), or
 * erases the person after confirming and sees the receipt and the past erasures.
 */
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
    expect(fieldError(empty.body, 'email')).toContain('E-mail is required, or a phone number (send one or both)');
    const bad = await submit(t.app, admin, '/admin/config/privacy', { phoneNumber: '12', confirm: 'on' });
    expect(fieldError(bad.body, 'phoneNumber')).toBeDefined();
  });

  it('is listed under Configuration, and only administrators may erase', async () => {
    expect((await get(t.app, '/admin/config', admin.cookie)).body).toContain('href="/admin/config/privacy"');
    const page = await get(t.app, '/admin/config/privacy', member.cookie);
    expect(page.body).toContain("Only administrators can export or erase a person's data.");
    expect((await submit(t.app, member, '/admin/config/privacy', { email: 'x@example.com', confirm: 'on' })).status).toBe(403);
  });
});

describe('console export', () => {
  const EXPORT = '/admin/config/privacy/export';
  const EMAIL = 'export.subject@example.com';
  const PHONE = '+14155550142';
  const ids: Record<string, string> = {};
  /** The API's answer for the same value: what the download must hold. */
  const apiFile = async (query: string) => {
    const res = await call(t.app, 'GET', `/privacy/subject?${query}`, { auth: a.auth });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  };

  beforeAll(async () => {
    const fields = [{ key: 'title', label: 'Title', type: 'text' }, { key: 'contact', label: 'Contact', type: 'email' }];
    expect((await call(t.app, 'POST', '/objects', { auth: a.auth, body: { slug: 'patients', name: 'Patients', fields } })).status).toBe(201);
    ids.lead = (await call(t.app, 'POST', '/leads', { auth: a.auth, body: { name: 'Export Subject', email: EMAIL } })).body.data.lead.id;
    ids.record = (await call(t.app, 'POST', '/objects/patients/records', { auth: a.auth, body: { title: 'Export Subject', contact: EMAIL } })).body.data.record.id;
    ids.phoneLead = (await call(t.app, 'POST', '/leads', { auth: a.auth, body: { name: 'Phone Subject', phoneNumber: PHONE } })).body.data.lead.id;
    await call(t.app, 'POST', '/leads', { auth: a.auth, body: { name: 'Someone Else', email: 'someone.else@example.com' } });
  });

  it('downloads, for an administrator, the file the API answers for the e-mail: lead and record, as a JSON attachment', async () => {
    expect((await get(t.app, '/admin/config/privacy', admin.cookie)).body).toContain(`action="${EXPORT}"`);
    const res = await submit(t.app, admin, EXPORT, { exportEmail: ` ${EMAIL.toUpperCase()} ` });
    expect(res.status, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['content-disposition']).toBe(`attachment; filename="subject-export-${localDate(t.ctx.clock.now(), 'UTC')}.json"`);
    expect(res.headers['cache-control']).toBe('no-store');
    const file = JSON.parse(res.body);
    expect(file).toEqual(await apiFile(`email=${encodeURIComponent(EMAIL)}`));
    expect(file.data.leads.map((l: { id: string }) => l.id)).toEqual([ids.lead]);
    expect(file.data.leads[0].email).toBe(EMAIL);
    expect(file.data.records.map((r: { id: string }) => r.id)).toEqual([ids.record]);
  });

  it('exports by phone alone, in any international notation', async () => {
    const res = await submit(t.app, admin, EXPORT, { exportEmail: '', exportPhoneNumber: '+1 (415) 555-0142' });
    expect(res.status, res.body).toBe(200);
    const file = JSON.parse(res.body);
    expect(file).toEqual(await apiFile(`phoneNumber=${encodeURIComponent(PHONE)}`));
    expect(file.data.leads.map((l: { id: string }) => l.id)).toEqual([ids.phoneLead]);
  });

  it('re-renders the page with the problem, and what was typed, on an empty or malformed value', async () => {
    const empty = await submit(t.app, admin, EXPORT, { exportEmail: ' ', exportPhoneNumber: '' });
    expect(empty.status).toBe(400);
    expect(empty.headers['content-type']).toMatch(/^text\/html/);
    expect(empty.body).toContain('There is a problem');
    expect(fieldError(empty.body, 'exportEmail')).toContain('E-mail is required, or a phone number (send one or both)');
    const bad = await submit(t.app, admin, EXPORT, { exportEmail: 'not-an-email', exportPhoneNumber: '12' });
    expect(bad.status).toBe(400);
    expect(fieldError(bad.body, 'exportEmail')).toBeDefined();
    expect(fieldError(bad.body, 'exportPhoneNumber')).toBeDefined();
    expect(bad.body).toContain('value="not-an-email"');
    expect(bad.body).toContain('value="12"');
    // The erasure form below stays untouched.
    expect(fieldError(bad.body, 'email')).toBeUndefined();
  });

  it('is refused to a member, who sees no export form', async () => {
    const page = await get(t.app, '/admin/config/privacy', member.cookie);
    expect(page.body).not.toContain(`action="${EXPORT}"`);
    const refused = await submit(t.app, member, EXPORT, { exportEmail: EMAIL });
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('Administrators only');
    expect(refused.body).not.toContain(ids.lead);
  });

  it('requires the session CSRF token', async () => {
    for (const csrf of [null, 'not-the-token']) {
      const res = await post(t.app, EXPORT, { exportEmail: EMAIL }, { cookie: admin.cookie, csrf });
      expect(res.status).toBe(403);
      expect(res.body).toContain('Form expired');
      expect(res.body).not.toContain(ids.lead);
    }
    expect((await post(t.app, EXPORT, { exportEmail: EMAIL }, { cookie: admin.cookie, csrf: admin.csrf })).status).toBe(200);
  });

  it('leaves neither the e-mail nor the phone in the debug log', async () => {
    const lines: string[] = [];
    const stream = new Writable({ write(chunk, _enc, cb) { lines.push(chunk.toString()); cb(); } });
    const logged = await buildAppWithSharedSchemas({ ...t.ctx, config: { ...t.ctx.config, logLevel: 'debug' } }, { logger: { stream } });
    try {
      const s = await signIn(logged, await addConsoleUser(t.ctx, a.orgId, { admin: true }));
      expect((await submit(logged, s, EXPORT, { exportEmail: EMAIL, exportPhoneNumber: '+1 415 555 0142' })).status).toBe(200);
      expect((await submit(logged, s, EXPORT, { exportEmail: `${EMAIL}@`, exportPhoneNumber: PHONE })).status).toBe(400);
    } finally {
      await logged.close();
    }
    const log = lines.join('');
    expect(log).toContain(EXPORT);
    for (const value of [EMAIL, 'export.subject', PHONE, '4155550142', '415 555 0142']) expect(log).not.toContain(value);
  });
});
