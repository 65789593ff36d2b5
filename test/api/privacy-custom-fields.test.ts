import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call, expectError } from '../helpers/http.js';
import { databaseText, rowsText } from '../helpers/database-text.js';
import { decryptedText } from '../helpers/decrypted-text.js';
import { startHarness, endpoint, type Endpoint, type Harness } from '../helpers/webhooks.js';

/**
 * Erasure and export (contract §7) of a person known only through custom e-mail and phone fields (contract §9)
 * of deals and leads: the export lists those items with their custom values decrypted; the erasure removes them
 * with their notes, tasks, events, deliveries and stored responses, answers `matched.deals`, records
 * `deal.erased`; afterwards neither the change feed, the export nor the database (SQLite: its files;
 * PostgreSQL: every row) holds them, their blind index (outside the receipt) or their ciphertexts.
 */
const EMAIL = 'yolanda.custom@privacy.example';
const PHONE = '+14155550142';
const DEAL_NAME = 'Vexillology Renewal';
const LEAD_NAME = 'Yolanda Quenby-Sparrow';
const NOTE = 'Spoke with Yolanda about the vexillology renewal';
const OTHER_EMAIL = 'someone.else@privacy.example';

let h: Harness;
let app: FastifyInstance;
let a: Endpoint;
let b: Seeded;
const ids: Record<string, string> = {};
/** The ciphertexts of the subject's custom values, as stored before the erasure. */
const sealed: string[] = [];

const post = (path: string, auth: Seeded['auth'], body: unknown, headers?: Record<string, string>) => call(app, 'POST', path, { auth, body, ...(headers ? { headers } : {}) });
const created = async (path: string, auth: Seeded['auth'], body: unknown, key: string, headers?: Record<string, string>) => {
  const res = await post(path, auth, body, headers);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data[key].id as string;
};
const subject = async (auth: Seeded['auth'], query = `email=${encodeURIComponent(EMAIL)}`) => {
  const res = await call(app, 'GET', `/privacy/subject?${query}`, { auth });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.data;
};

/** Every event of the change feed, oldest first. */
async function feed(auth: Seeded['auth']): Promise<{ type: string; data: { id: string; object: string; changes: unknown } }[]> {
  const out = [];
  let after = '';
  for (;;) {
    const res = await call(app, 'GET', `/events?limit=500${after}`, { auth });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    if (res.body.data.events.length === 0) return out;
    out.push(...res.body.data.events);
    after = `&after=${res.body.data.nextCursor}`;
  }
}

const DEAL_FIELDS = [
  { key: 'buyerEmail', label: 'Buyer e-mail', type: 'email' },
  { key: 'buyerPhone', label: 'Buyer phone', type: 'phone' },
  { key: 'channel', label: 'Channel', type: 'text' },
];
const LEAD_FIELDS = [
  { key: 'privateEmail', label: 'Private e-mail', type: 'email' },
  { key: 'tier', label: 'Tier', type: 'select', options: ['gold', 'silver'] },
];

beforeAll(async () => {
  h = await startHarness();
  app = h.t.app;
  a = await endpoint(h);
  b = await seedOrg(h.t.ctx);
  for (const org of [a.org, b]) {
    expect((await call(app, 'PATCH', '/objects/deals', { auth: org.auth, body: { fields: DEAL_FIELDS } })).status).toBe(200);
    expect((await call(app, 'PATCH', '/objects/leads', { auth: org.auth, body: { fields: LEAD_FIELDS } })).status).toBe(200);
  }
  const auth = a.org.auth;
  ids.deal = await created('/deals', auth, { name: DEAL_NAME, buyerEmail: EMAIL.toUpperCase(), channel: 'partner' }, 'deal', { 'idempotency-key': 'custom-deal' });
  const patched = await call(app, 'PATCH', `/deals/${ids.deal}`, { auth, body: { buyerPhone: '+1 (415) 555-0142', amount: '1200.00', currency: 'EUR', expectedCloseDate: '2999-03-31' } });
  expect(patched.status, JSON.stringify(patched.body)).toBe(200);
  ids.note = await created('/notes', auth, { target: { object: 'deal', id: ids.deal }, body: NOTE }, 'note');
  ids.task = await created('/tasks', auth, { target: { object: 'deal', id: ids.deal }, title: `Call about ${DEAL_NAME}`, dueDate: '2999-01-01' }, 'task');
  // Known by its phone only, and in the trash: still the person's data.
  ids.trashedDeal = await created('/deals', auth, { name: `${DEAL_NAME} (old)`, buyerPhone: PHONE }, 'deal');
  expect((await call(app, 'DELETE', `/deals/${ids.trashedDeal}`, { auth })).status).toBe(200);
  ids.lead = await created('/leads', auth, { name: LEAD_NAME, privateEmail: EMAIL, tier: 'gold' }, 'lead', { 'idempotency-key': 'custom-lead' });
  ids.otherDeal = await created('/deals', auth, { name: 'Unrelated deal', buyerEmail: OTHER_EMAIL }, 'deal');
  ids.bDeal = await created('/deals', b.auth, { name: 'Other organization deal', buyerEmail: EMAIL }, 'deal');
  const db = h.t.ctx.database.db;
  for (const table of ['deals', 'leads'] as const) {
    for (const row of await db.selectFrom(table).select('custom').where('id', 'in', [ids.deal!, ids.trashedDeal!, ids.lead!]).execute()) {
      const values = JSON.parse(row.custom!) as Record<string, string>;
      sealed.push(...['buyerEmail', 'buyerPhone', 'privateEmail'].flatMap((k) => (values[k] ? [values[k]] : [])));
    }
  }
  expect(sealed).toHaveLength(4);
  await h.settled();
}, 180_000);
afterAll(async () => {
  await h?.close();
});

describe('GET /privacy/subject before the erasure', () => {
  it('lists the deals and leads holding the value in a custom field, with every custom value decrypted', async () => {
    const file = await subject(a.org.auth, `email=${encodeURIComponent(EMAIL)}&phoneNumber=${encodeURIComponent(PHONE)}`);
    const deals = new Map(file.deals.map((d: Record<string, unknown>) => [d.id, d]));
    expect([...deals.keys()].sort()).toEqual([ids.deal, ids.trashedDeal].sort());
    expect(deals.get(ids.deal)).toMatchObject({ name: DEAL_NAME, buyerEmail: EMAIL, buyerPhone: PHONE, channel: 'partner', deletedAt: null });
    // In the API's shape: as GET shows the item.
    expect(deals.get(ids.deal)).toEqual((await call(app, 'GET', `/deals/${ids.deal}`, { auth: a.org.auth })).body.data.deal);
    expect(file.leads[0]).toEqual((await call(app, 'GET', `/leads/${ids.lead}`, { auth: a.org.auth })).body.data.lead);
    expect(deals.get(ids.trashedDeal)).toMatchObject({ buyerEmail: null, buyerPhone: PHONE, channel: null, deletedAt: expect.any(String) });
    expect(file.leads).toEqual([expect.objectContaining({ id: ids.lead, name: LEAD_NAME, email: null, privateEmail: EMAIL, tier: 'gold' })]);
    // No stored form leaks: no sealed JSON, no ciphertext.
    for (const item of [...file.deals, ...file.leads]) expect(item).not.toHaveProperty('custom');
    for (const c of sealed) expect(JSON.stringify(file)).not.toContain(c);
    expect(file.notes.map((n: { id: string; body: string }) => [n.id, n.body])).toEqual([[ids.note, NOTE]]);
    expect(file.tasks.map((t: { id: string }) => t.id)).toEqual([ids.task]);
    const named = new Set(file.events.map((e: { objectId: string }) => e.objectId));
    expect(named).toEqual(new Set([ids.deal, ids.trashedDeal, ids.lead, ids.note, ids.task]));
    expect(file.events.find((e: { type: string }) => e.type === 'deal.updated')).toMatchObject({ objectId: ids.deal, object: 'deal' });
  });

  it('matches the phone in any notation, and leaves the other deal and the other organization out', async () => {
    const file = await subject(a.org.auth, `phoneNumber=${encodeURIComponent('+1 415-555-0142')}`);
    expect(file.deals.map((d: { id: string }) => d.id).sort()).toEqual([ids.deal, ids.trashedDeal].sort());
    expect(file.leads).toEqual([]);
    expect((await subject(b.auth)).deals.map((d: { id: string; buyerEmail: string }) => [d.id, d.buyerEmail])).toEqual([[ids.bDeal, EMAIL]]);
  });
});

describe('POST /privacy/erasures of a value held in custom fields', () => {
  let erasure: Record<string, unknown>;

  beforeAll(async () => {
    const res = await post('/privacy/erasures', a.org.auth, { email: EMAIL, phoneNumber: PHONE, reason: 'ticket 77' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    erasure = res.body.data.erasure;
    await h.settled();
  }, 180_000);

  it('counts the deals in the receipt, and lists it so', async () => {
    expect(erasure).toMatchObject({ status: 'completed', matched: { leads: 1, accounts: 0, deals: 2, records: 0 }, reason: 'ticket 77' });
    expect((await call(app, 'GET', '/privacy/erasures', { auth: a.org.auth })).body.data.erasures).toEqual([erasure]);
  });

  it('removed the deals (the trashed one too), the lead, and the note and task on the deal', async () => {
    for (const path of [`/deals/${ids.deal}`, `/deals/${ids.trashedDeal}`, `/leads/${ids.lead}`, `/notes/${ids.note}`, `/tasks/${ids.task}`]) {
      expectError(await call(app, 'GET', path, { auth: a.org.auth }), 404, 'NOT_FOUND');
    }
    const trash = await call(app, 'GET', '/deals?deleted=true', { auth: a.org.auth });
    expect(trash.body.data.deals).toEqual([]);
    const live = await call(app, 'GET', `/deals?filter[buyerEmail]=${encodeURIComponent(EMAIL)}`, { auth: a.org.auth });
    expect(live.body.data.deals).toEqual([]);
    expect((await call(app, 'GET', `/deals/${ids.otherDeal}`, { auth: a.org.auth })).body.data.deal.buyerEmail).toBe(OTHER_EMAIL);
    expect((await call(app, 'GET', `/deals/${ids.bDeal}`, { auth: b.auth })).body.data.deal.buyerEmail).toBe(EMAIL);
  });

  it('leaves only the erased events naming them in the change feed, and told subscribers deal.erased by id only', async () => {
    const erasedIds = new Set([ids.deal, ids.trashedDeal, ids.lead, ids.note, ids.task]);
    const naming = (await feed(a.org.auth)).filter((e) => erasedIds.has(e.data.id));
    expect(naming.map((e) => [e.type, e.data.id]).sort()).toEqual(
      [['deal.erased', ids.deal], ['deal.erased', ids.trashedDeal], ['lead.erased', ids.lead], ['note.purged', ids.note], ['task.purged', ids.task]].sort(),
    );
    for (const e of naming) expect(e.data.changes).toEqual({ before: {}, after: {} });
    const delivered = h.receiver.requests(a.path).map((r) => JSON.parse(r.body)).filter((e) => e.type === 'deal.erased');
    expect(delivered.map((e) => e.data.id).sort()).toEqual([ids.deal, ids.trashedDeal].sort());
    expect(delivered[0]).toMatchObject({ data: { object: 'deal', description: 'Deal erased' } });
  });

  it('a retried idempotent create is not replayed from the stored response of the erased deal', async () => {
    const again = await post('/deals', a.org.auth, { name: DEAL_NAME, buyerEmail: EMAIL.toUpperCase(), channel: 'partner' }, { 'idempotency-key': 'custom-deal' });
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(again.body.data.deal.id).not.toBe(ids.deal);
    expect((await post('/privacy/erasures', a.org.auth, { email: EMAIL })).body.data.erasure.matched).toEqual({ leads: 0, accounts: 0, deals: 1, records: 0 });
  });

  it('leaves in the database no blind index of theirs (but the receipts\'), no ciphertext, name or note', async () => {
    const db = h.t.ctx.database.db;
    const bidx = h.t.ctx.blindIndex.compute('email', a.org.orgId, EMAIL);
    const phoneBidx = h.t.ctx.blindIndex.compute('phone', a.org.orgId, PHONE);
    expect(await db.selectFrom('item_values').select('item_id').where('organization_id', '=', a.org.orgId).where('text_value', 'in', [bidx, phoneBidx]).execute()).toEqual([]);
    const receipts = await db.selectFrom('privacy_erasures').select(['email_bidx', 'phone_bidx']).where('organization_id', '=', a.org.orgId).execute();
    const [files, rows, decrypted] = [await databaseText(h.t), await rowsText(h.t), await decryptedText(h.t)];
    const count = (text: string, needle: string) => text.split(needle).length - 1;
    expect(count(rows, bidx), 'e-mail blind index in rows').toBe(receipts.filter((r) => r.email_bidx === bidx).length);
    expect(count(rows, phoneBidx), 'phone blind index in rows').toBe(receipts.filter((r) => r.phone_bidx === phoneBidx).length);
    for (const c of sealed) expect(files.includes(c), 'a ciphertext of the subject').toBe(false);
    for (const needle of [DEAL_NAME, LEAD_NAME, NOTE]) {
      expect(files.includes(needle), `${needle} in the database`).toBe(false);
    }
    // Organization B's deal holds the same e-mail (sealed): exactly that copy remains, beside the unrelated deal's.
    expect(count(decrypted, EMAIL)).toBe(1);
    expect(count(decrypted, PHONE)).toBe(0);
    expect(decrypted).toContain(OTHER_EMAIL);
  });

  it('the export then finds nothing', async () => {
    const file = await subject(a.org.auth, `email=${encodeURIComponent(EMAIL)}&phoneNumber=${encodeURIComponent(PHONE)}`);
    expect(file).toEqual({ leads: [], accounts: [], deals: [], records: [], notes: [], tasks: [], events: [] });
  });
});
