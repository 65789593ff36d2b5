import { hash } from 'node:crypto';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { addKey, seedOrg, type Seeded } from '../helpers/seed.js';
import { buildAppWithSharedSchemas } from '../helpers/test-app.js';
import { call, expectError } from '../helpers/http.js';
import { databaseText, rowsText } from '../helpers/database-text.js';
import { decryptedText } from '../helpers/decrypted-text.js';
import { startHarness, endpoint, type Endpoint, type Harness } from '../helpers/webhooks.js';
import { canonicalJson } from '../../src/lib/canonical-json.js';

/**
 * Erasure and export (contract §7), through the real app with a webhook subscriber: after an erasure the
 * database (SQLite: its files; PostgreSQL: every row), the decrypted ciphertexts, the debug log, the delivery
 * log and the event bodies hold neither the e-mail, the phone nor the name; everyone else's data is intact.
 */
const NAME = 'Zebulon Quixotic-Marsh';
const EMAIL = 'zebulon.q@privacy.example';
const PHONE = '+14155550199';
const OTHER = 'Ottilie Unrelated';
const OTHER_ORG_NAME = 'Bea Otherorg';

let h: Harness;
let app: FastifyInstance;
const log: string[] = [];
let a: Endpoint;
let b: Seeded;
const ids: Record<string, string> = {};

const post = (path: string, auth: Seeded['auth'], body: unknown, headers?: Record<string, string>) => call(app, 'POST', path, { auth, body, ...(headers ? { headers } : {}) });

beforeAll(async () => {
  h = await startHarness();
  const stream = new Writable({ write(chunk, _enc, cb) { log.push(chunk.toString()); cb(); } });
  app = await buildAppWithSharedSchemas({ ...h.t.ctx, config: { ...h.t.ctx.config, logLevel: 'debug' } }, { logger: { stream } });
  a = await endpoint(h);
  b = await seedOrg(h.t.ctx);
  const auth = a.org.auth;
  const fields = [
    { key: 'title', label: 'Title', type: 'text' },
    { key: 'contact', label: 'Contact', type: 'email' },
    { key: 'mobile', label: 'Mobile', type: 'phone' },
    { key: 'due', label: 'Due', type: 'date', role: 'due' },
  ];
  expect((await post('/objects', auth, { slug: 'patients', name: 'Patients', fields })).status).toBe(201);
  ids.lead = (await post('/leads', auth, { name: NAME, email: EMAIL.toUpperCase() }, { 'idempotency-key': 'privacy-lead' })).body.data.lead.id;
  expect((await call(app, 'PATCH', `/leads/${ids.lead}`, { auth, body: { phoneNumber: '+1 (415) 555-0199', notes: `Called ${NAME}` } })).status).toBe(200);
  ids.phoneLead = (await post('/leads', auth, { name: NAME, phoneNumber: PHONE })).body.data.lead.id;
  // In the trash: still the person's data, so exported and erased like the live items.
  expect((await call(app, 'DELETE', `/leads/${ids.phoneLead}`, { auth })).status).toBe(200);
  ids.account = (await post('/accounts', auth, { name: NAME, email: EMAIL }, { 'idempotency-key': 'privacy-account' })).body.data.account.id;
  const record = await post('/objects/patients/records', auth, { title: NAME, contact: EMAIL, mobile: PHONE, due: '2999-01-01' }, { 'idempotency-key': 'privacy-record' });
  expect(record.status, JSON.stringify(record.body)).toBe(201);
  ids.record = record.body.data.record.id;
  ids.other = (await post('/leads', auth, { name: OTHER, email: 'ottilie@unrelated.example' })).body.data.lead.id;
  ids.otherRecord = (await post('/objects/patients/records', auth, { title: OTHER, contact: 'ottilie@unrelated.example' })).body.data.record.id;
  ids.bLead = (await post('/leads', b.auth, { name: OTHER_ORG_NAME, email: EMAIL, phoneNumber: PHONE })).body.data.lead.id;
  await h.settled();
}, 180_000);
afterAll(async () => {
  await app?.close();
  await h?.close();
});

describe('GET /privacy/subject', () => {
  it('exports every item holding the e-mail, decrypted, with the events naming them', async () => {
    const res = await call(app, 'GET', `/privacy/subject?email=${encodeURIComponent(EMAIL.toUpperCase())}`, { auth: a.org.auth });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const file = res.body.data;
    expect(file.leads.map((l: { id: string; email: string; phoneNumber: string }) => [l.id, l.email, l.phoneNumber])).toEqual([[ids.lead, EMAIL, PHONE]]);
    expect(file.accounts.map((x: { id: string; name: string }) => [x.id, x.name])).toEqual([[ids.account, NAME]]);
    expect(file.records.map((r: { id: string; contact: string; mobile: string }) => [r.id, r.contact, r.mobile])).toEqual([[ids.record, EMAIL, PHONE]]);
    const named = new Set(file.events.map((e: { objectId: string }) => e.objectId));
    expect(named).toEqual(new Set([ids.lead, ids.account, ids.record]));
    expect(file.events.find((e: { type: string }) => e.type === 'lead.updated')).toMatchObject({ objectId: ids.lead, object: 'lead' });
    expect(Object.keys(file.events[0]).sort()).toEqual(['createdAt', 'id', 'object', 'objectId', 'type']);
  });

  it('finds by phone in any notation, and answers 400 without a value', async () => {
    const res = await call(app, 'GET', `/privacy/subject?phoneNumber=${encodeURIComponent('+1 415-555-0199')}`, { auth: a.org.auth });
    const leads = new Map(res.body.data.leads.map((l: { id: string; deletedAt: string | null }) => [l.id, l.deletedAt]));
    expect(new Set(leads.keys())).toEqual(new Set([ids.lead, ids.phoneLead]));
    expect(leads.get(ids.lead)).toBeNull();
    expect(Date.parse(String(leads.get(ids.phoneLead)))).not.toBeNaN();
    expect(res.body.data.records.map((r: { id: string }) => r.id)).toEqual([ids.record]);
    expectError(await call(app, 'GET', '/privacy/subject', { auth: a.org.auth }), 400, 'VALIDATION_FAILED');
  });

  it('needs privacy:read: no other scope (not even privacy:write) implies it', async () => {
    const writer = await addKey(h.t.ctx, a.org.orgId, ['privacy:write', 'leads:read', 'leads:write']);
    expectError(await call(app, 'GET', `/privacy/subject?email=${EMAIL}`, { auth: writer.auth }), 403, 'INSUFFICIENT_SCOPE');
    const reader = await addKey(h.t.ctx, a.org.orgId, ['privacy:read']);
    expectError(await post('/privacy/erasures', reader.auth, { email: EMAIL }), 403, 'INSUFFICIENT_SCOPE');
  });
});

describe('POST /privacy/erasures', () => {
  let erasure: Record<string, unknown>;
  let cacheDropped = 0;

  beforeAll(async () => {
    const forget = vi.spyOn(h.t.ctx.cipher, 'forgetCached');
    const res = await post('/privacy/erasures', a.org.auth, { email: EMAIL, phoneNumber: '+1 415 555 0199', reason: 'ticket 42' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    erasure = res.body.data.erasure;
    cacheDropped = forget.mock.calls.length;
    forget.mockRestore();
    await h.settled();
  }, 180_000);

  it('answers the receipt with the counts, and lists it', async () => {
    expect(erasure).toMatchObject({ status: 'completed', matched: { leads: 2, accounts: 1, deals: 0, records: 1 }, reason: 'ticket 42' });
    expect(cacheDropped, 'the decryption cache was dropped').toBe(1);
    expect(Date.parse(erasure.completedAt as string)).toBeGreaterThanOrEqual(Date.parse(erasure.requestedAt as string));
    const list = await call(app, 'GET', '/privacy/erasures', { auth: (await addKey(h.t.ctx, a.org.orgId, ['privacy:read'])).auth });
    expect(list.body.data.erasures).toEqual([erasure]);
    expect((await call(app, 'GET', '/privacy/erasures', { auth: b.auth })).body.data.erasures).toEqual([]);
  });

  it('removed the items for good, the trashed lead too, with their reminders, and told subscribers by id only', async () => {
    const trash = await call(app, 'GET', '/leads?deleted=true', { auth: a.org.auth });
    expect(trash.body.data.leads.map((l: { id: string }) => l.id)).not.toContain(ids.phoneLead);
    for (const [path, id] of [['/leads', ids.lead], ['/leads', ids.phoneLead], ['/accounts', ids.account], ['/objects/patients/records', ids.record]] as const) {
      expectError(await call(app, 'GET', `${path}/${id}`, { auth: a.org.auth }), 404, 'NOT_FOUND');
    }
    const db = h.t.ctx.database.db;
    expect(await db.selectFrom('record_reminders').select('record_id').where('record_id', '=', ids.record!).execute()).toEqual([]);
    const erased = h.receiver.requests(a.path).map((r) => JSON.parse(r.body)).filter((e) => e.type.endsWith('.erased'));
    expect(erased.map((e) => [e.type, e.data.id]).sort()).toEqual(
      [['account.erased', ids.account], ['lead.erased', ids.lead], ['lead.erased', ids.phoneLead], ['record.erased', ids.record]].sort(),
    );
    for (const e of erased) expect(e.data.changes).toEqual({ before: {}, after: {} });
    // A record's address is (slug, id), as in every record event; the others carry no slug.
    expect(erased.map((e) => [e.type, e.data.objectSlug ?? null]).sort()).toEqual(
      [['account.erased', null], ['lead.erased', null], ['lead.erased', null], ['record.erased', 'patients']].sort(),
    );
  });

  it('a retried idempotent create is not replayed from a stored response of an erased item', async () => {
    const again = await post('/leads', a.org.auth, { name: NAME, email: EMAIL.toUpperCase() }, { 'idempotency-key': 'privacy-lead' });
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(again.body.data.lead.id).not.toBe(ids.lead);
    expect((await post('/privacy/erasures', a.org.auth, { email: EMAIL })).body.data.erasure.matched).toEqual({ leads: 1, accounts: 0, deals: 0, records: 0 });
    // Retrying is safe: nothing is left to match.
    const retried = await post('/privacy/erasures', a.org.auth, { email: EMAIL });
    expect(retried.status).toBe(201);
    expect(retried.body.data.erasure.matched).toEqual({ leads: 0, accounts: 0, deals: 0, records: 0 });
  });

  it('leaves no e-mail, phone or name in the database, its ciphertexts, the debug log, deliveries or events', async () => {
    const needles = [EMAIL, EMAIL.toUpperCase(), PHONE, PHONE.slice(1), '415 555 0199', '(415) 555-0199', NAME, NAME.toLowerCase()];
    const [files, rows, decrypted] = [await databaseText(h.t), await rowsText(h.t), await decryptedText(h.t)];
    const logText = log.join('');
    expect(logText).toContain('/privacy/erasures');
    // Organization B's lead holds the same e-mail and phone (sealed): exactly that one copy of each remains.
    const count = (text: string, needle: string) => text.split(needle).length - 1;
    const ownedByB = new Map([[EMAIL, 1], [PHONE, 1], [PHONE.slice(1), 1]]);
    for (const needle of needles) {
      for (const [where, text] of [['database', files], ['rows', rows], ['log', logText]] as const) {
        expect(text.includes(needle), `${needle} in ${where}`).toBe(false);
      }
      expect(count(decrypted, needle), `${needle} decrypted`).toBe(ownedByB.get(needle) ?? 0);
    }
    // Everyone else's data is all there: the other person of this organization, the same e-mail in another.
    expect(rows).toContain(OTHER);
    expect(decrypted).toContain('ottilie@unrelated.example');
    expect((await call(app, 'GET', `/leads/${ids.other}`, { auth: a.org.auth })).status).toBe(200);
    expect((await call(app, 'GET', `/objects/patients/records/${ids.otherRecord}`, { auth: a.org.auth })).body.data.record.title).toBe(OTHER);
    const inB = await call(app, 'GET', `/leads?q=${encodeURIComponent(EMAIL)}`, { auth: b.auth });
    expect(inB.body.data.leads.map((l: { id: string; phoneNumber: string }) => [l.id, l.phoneNumber])).toEqual([[ids.bLead, PHONE]]);
    expect((await call(app, 'GET', `/privacy/subject?email=${EMAIL}`, { auth: b.auth })).body.data.leads).toHaveLength(1);
  });

  it('search no longer finds the erased record by its text, and still finds the others', async () => {
    expect((await call(app, 'GET', '/objects/patients/records?q=Quixotic', { auth: a.org.auth })).body.data.records).toEqual([]);
    expect((await call(app, 'GET', `/leads?q=Quixotic`, { auth: a.org.auth })).body.data.leads).toEqual([]);
    expect((await call(app, 'GET', '/objects/patients/records?q=Unrelated', { auth: a.org.auth })).body.data.records).toHaveLength(1);
  });

  it('asks for an e-mail or a phone, and validates them as lead contact fields are', async () => {
    expectError(await post('/privacy/erasures', a.org.auth, { reason: 'nothing' }), 400, 'VALIDATION_FAILED');
    expectError(await post('/privacy/erasures', a.org.auth, { email: 'not-an-email' }), 400, 'VALIDATION_FAILED');
    expectError(await post('/privacy/erasures', a.org.auth, { phoneNumber: '12' }), 400, 'VALIDATION_FAILED');
    expectError(await post('/privacy/erasures', a.org.auth, { email: EMAIL, name: NAME }), 400, 'VALIDATION_FAILED');
  });

  it('refuses a reason that repeats the e-mail or phone being erased (the receipt keeps only their fingerprints), erasing nothing', async () => {
    const lead = await post('/leads', a.org.auth, { name: 'Kept Keren', email: 'keren@privacy.example', phoneNumber: '+14155550177' });
    expect(lead.status).toBe(201);
    const receipts = async () => (await call(app, 'GET', '/privacy/erasures?limit=100', { auth: a.org.auth })).body.data.erasures.length;
    const before = await receipts();
    for (const [body, named] of [
      [{ email: 'keren@privacy.example', reason: 'Art. 17 request from KEREN@privacy.example' }, 'e-mail'],
      [{ phoneNumber: '+14155550177', reason: 'caller at (415) 555-0177 asked to be forgotten' }, 'phone number'],
      [{ phoneNumber: '+1 415 555 0177', reason: 'ticket 9, +1 415-555-0177' }, 'phone number'],
      [{ email: 'keren@privacy.example', phoneNumber: '+14155550177', reason: 'keren@privacy.example / 4155550177' }, 'e-mail and phone number'],
    ] as const) {
      const res = await post('/privacy/erasures', a.org.auth, body);
      expect(expectError(res, 400, 'VALIDATION_FAILED')).toEqual([{ field: 'reason', code: 'not_allowed', message: expect.stringContaining(`the ${named} being erased`) }]);
    }
    expect(await receipts()).toBe(before);
    expect((await call(app, 'GET', `/leads/${lead.body.data.lead.id}`, { auth: a.org.auth })).status).toBe(200);
    // A reason that names neither (a ticket with digits of its own) is kept as sent.
    const ok = await post('/privacy/erasures', a.org.auth, { email: 'keren@privacy.example', phoneNumber: '+14155550177', reason: 'ticket 4155 of 2026-11-28' });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    expect(ok.body.data.erasure).toMatchObject({ reason: 'ticket 4155 of 2026-11-28', matched: { leads: 1 } });
  });
});

describe('records written before migration 0012', () => {
  it('are indexed on the first export or erasure, then found like the others', async () => {
    const db = h.t.ctx.database.db;
    await db.deleteFrom('record_contacts').where('record_id', '=', ids.otherRecord!).execute();
    const ask = () => call(app, 'GET', '/privacy/subject?email=ottilie@unrelated.example', { auth: a.org.auth });
    expect((await ask()).body.data.records).toEqual([]);
    const { seq } = await db.selectFrom('records').select('seq').where('id', '=', ids.otherRecord!).executeTakeFirstOrThrow();
    await db.insertInto('privacy_backfill').values({ name: 'record_contacts', done_seq: 0, upto_seq: Number(seq) }).execute();
    expect((await ask()).body.data.records.map((r: { id: string }) => r.id)).toEqual([ids.otherRecord]);
    expect(await db.selectFrom('privacy_backfill').selectAll().execute()).toEqual([]);
  });
});

describe('a record whose e-mail changed', () => {
  it('is found by its new value only', async () => {
    const created = await post('/objects/patients/records', a.org.auth, { title: 'Moving', contact: 'old.address@privacy.example' });
    await call(app, 'PATCH', `/objects/patients/records/${created.body.data.record.id}`, { auth: a.org.auth, body: { contact: 'new.address@privacy.example' } });
    const find = async (email: string) => (await call(app, 'GET', `/privacy/subject?email=${email}`, { auth: a.org.auth })).body.data.records.map((r: { id: string }) => r.id);
    expect(await find('old.address@privacy.example')).toEqual([]);
    expect(await find('new.address@privacy.example')).toEqual([created.body.data.record.id]);
  });
});

describe('POST /privacy/erasures with an Idempotency-Key', () => {
  it('answers a retry with the first receipt (erasing once), refuses another body, and keeps only a keyed hash', async () => {
    const email = 'idem.erasure@privacy.example';
    const body = { email, reason: 'ticket 43' };
    const headers = { 'idempotency-key': 'erase-1' };
    const lead = (await post('/leads', a.org.auth, { name: 'Idem Erasure', email })).body.data.lead.id;
    const first = await post('/privacy/erasures', a.org.auth, body, headers);
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(first.body.data.erasure.matched).toEqual({ leads: 1, accounts: 0, deals: 0, records: 0 });
    expectError(await call(app, 'GET', `/leads/${lead}`, { auth: a.org.auth }), 404, 'NOT_FOUND');
    const again = await post('/privacy/erasures', a.org.auth, { reason: body.reason, email }, headers);
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expectError(await post('/privacy/erasures', a.org.auth, { email: 'someone.else@privacy.example' }, headers), 422, 'IDEMPOTENCY_KEY_REUSED');
    const receipts = (await call(app, 'GET', '/privacy/erasures', { auth: a.org.auth })).body.data.erasures;
    expect(receipts.filter((e: { reason: string | null }) => e.reason === body.reason)).toEqual([first.body.data.erasure]);
    const row = await h.t.ctx.database.db.selectFrom('idempotency_keys').selectAll().where('organization_id', '=', a.org.orgId).where('key', '=', 'erase-1').executeTakeFirstOrThrow();
    expect(row.request_hash).toMatch(/^k1:[0-9a-f]{64}$/);
    expect(row.request_hash).not.toContain(hash('sha256', `POST /api/public/v1/privacy/erasures\n${canonicalJson(body)}`, 'hex'));
    expect(JSON.stringify(row)).not.toContain(email);
  });
});
