import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { contactAad, sealContacts } from '../../src/crypto/contact-fields.js';
import { ContactSealThread } from '../../src/crypto/contact-seal-thread.js';
import { leadBatch, leadSealThread } from '../../src/modules/leads/leads.batch.js';
import { prepareCreates, runCreateBatch } from '../../src/modules/shared/batch.service.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';

/**
 * The new leads of a batch are prepared before its transaction, their contacts sealed partly or wholly on a
 * worker thread (contact-seal-thread.ts): what they store must be exactly what sealing on the serving thread
 * stores (ciphertexts bound to their row, the same blind indexes), and a definition changed between the
 * preparation and the transaction must be the one the leads are checked against.
 */
let t: TestApp;
let o: Seeded;

beforeAll(async () => {
  t = await buildTestApp();
  o = await seedOrg(t.ctx, { rateLimitPerMinute: 1_000_000 });
});
afterAll(() => t.close());

const rows = (n: number, tag: string) =>
  Array.from({ length: n }, (_, i) => ({ rowId: `${tag}${String(i).padStart(6, '0')}`, email: i % 3 === 2 ? null : `${tag}.${i}@seal.example`, phoneNumber: i % 2 ? `+1415555${String(1000 + i)}` : null }));

describe('ContactSealThread', () => {
  it('seals as sealContacts does on this thread: the same blind indexes, ciphertexts that open only for their own row', async () => {
    const seals = leadSealThread(t.ctx);
    try {
      const input = rows(40, 'a');
      const sealed = await seals.seal('leads', o.orgId, input);
      expect(sealed).toHaveLength(40);
      input.forEach((row, i) => {
        const here = sealContacts(t.ctx, { table: 'leads', rowId: row.rowId, organizationId: o.orgId }, row);
        const far = sealed[i]!;
        expect(far.emailBidx).toBe(here.emailBidx);
        expect(far.phoneBidx).toBe(here.phoneBidx);
        expect(far.emailEnc === null).toBe(row.email === null);
        expect(far.phoneEnc === null).toBe(row.phoneNumber === null);
        if (far.emailEnc !== null) {
          expect(far.emailEnc).not.toBe(here.emailEnc);
          expect(t.ctx.cipher.decrypt(far.emailEnc, contactAad('leads', row.rowId, 'email'))).toBe(row.email);
          expect(() => t.ctx.cipher.decrypt(far.emailEnc!, contactAad('leads', input[(i + 1) % 40]!.rowId, 'email'))).toThrow();
        }
        if (far.phoneEnc !== null) expect(t.ctx.cipher.decrypt(far.phoneEnc, contactAad('leads', row.rowId, 'phone'))).toBe(row.phoneNumber);
      });
    } finally {
      await seals.close();
    }
  });

  it('a worker that stops fails what it had pending, and the next call starts another', async () => {
    const seals = leadSealThread(t.ctx);
    try {
      await seals.seal('leads', o.orgId, rows(2, 'b'));
      const pending = seals.seal('leads', o.orgId, rows(2000, 'c'));
      await seals.close();
      await expect(pending).rejects.toThrow();
      const again = await seals.seal('leads', o.orgId, rows(3, 'd'));
      expect(again.map((s) => s.emailBidx)).toEqual(rows(3, 'd').map((r) => (r.email === null ? null : t.ctx.blindIndex.compute('email', o.orgId, r.email))));
    } finally {
      await seals.close();
    }
  });
});

type Result = { index: number; status: number; lead?: { id: string; email: string; phoneNumber: string | null }; error?: unknown };

/** A batch of `n` new leads, some with a phone number, item 7 with one that can't be valid. */
const newLeads = (n: number, tag: string) => {
  const items: Record<string, string>[] = Array.from({ length: n }, (_, i) => ({ name: `${tag} ${i}`, email: `${tag}.${i}@Batch.example`, ...(i % 2 ? { phoneNumber: `+44 20 7946 ${String(1000 + i)}` } : {}) }));
  items[7] = { name: 'Bad phone', email: `${tag}.bad@batch.example`, phoneNumber: '+1 555' };
  return items;
};

/** Every result as a single create gives it: the bad phone's 400, the others read back in clear and found by e-mail and phone. */
async function expectStoredAsSent(items: Record<string, string>[], results: Result[]) {
  const single = await call(t.app, 'POST', '/leads', { auth: o.auth, body: items[7] });
  expect(results[7]).toEqual({ index: 7, status: 400, error: { code: single.body.code, message: single.body.message, errors: single.body.errors } });
  for (const r of results.filter((x) => x.index !== 7)) {
    expect(r.status).toBe(201);
    const sent = items[r.index]!;
    const stored = (await call(t.app, 'GET', `/leads/${r.lead!.id}`, { auth: o.auth })).body.data.lead;
    expect(stored).toEqual(r.lead);
    expect(stored.email).toBe(sent.email!.toLowerCase());
    expect(stored.phoneNumber).toBe(sent.phoneNumber ? `+44207946${1000 + r.index}` : null);
    const byEmail = (await call(t.app, 'GET', `/leads?q=${encodeURIComponent(sent.email!)}`, { auth: o.auth })).body.data.leads;
    expect(byEmail.map((l: { id: string }) => l.id)).toEqual([r.lead!.id]);
    if (sent.phoneNumber) {
      const byPhone = (await call(t.app, 'GET', `/leads?q=${encodeURIComponent(stored.phoneNumber)}&limit=100`, { auth: o.auth })).body.data.leads;
      expect(byPhone.map((l: { id: string }) => l.id)).toContain(r.lead!.id);
    }
  }
}

describe('POST /leads/batch: new leads prepared before the transaction', () => {
  it('with nothing else to store, sealed on the serving thread: every lead as a single create would store it', async () => {
    const seal = vi.spyOn(ContactSealThread.prototype, 'seal');
    try {
      const items = newLeads(30, 'Alone');
      const res = await call(t.app, 'POST', '/leads/batch', { auth: o.auth, body: { items } });
      expect(res.status).toBe(200);
      expect(seal).not.toHaveBeenCalled();
      await expectStoredAsSent(items, res.body.data.results);
    } finally {
      seal.mockRestore();
    }
  });

  it('while another transaction is open (SQLite: batches at once), sealed on the worker: the same leads', async () => {
    const seal = vi.spyOn(ContactSealThread.prototype, 'seal');
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const held = t.ctx.database.transaction(() => gate);
    try {
      const items = newLeads(30, 'Busy');
      const batch = call(t.app, 'POST', '/leads/batch', { auth: o.auth, body: { items } });
      // SQLite's one writer: the batch is prepared while the held transaction is open, then waits for it.
      if (t.ctx.database.dialect === 'sqlite') await vi.waitFor(() => expect(seal).toHaveBeenCalledTimes(1));
      release();
      const res = await batch;
      expect(res.status).toBe(200);
      if (t.ctx.database.dialect === 'sqlite') expect(seal.mock.calls[0]![2]).toHaveLength(29);
      await expectStoredAsSent(items, res.body.data.results);
    } finally {
      release();
      await held;
      seal.mockRestore();
    }
  });

  it('leads prepared before a definition change are checked against the new definition in the transaction', async () => {
    const org = await seedOrg(t.ctx, { rateLimitPerMinute: 1_000_000 });
    const seals = leadSealThread(t.ctx);
    try {
      const spec = leadBatch(t.ctx, seals);
      const caller = { organizationId: org.orgId, actor: { type: 'API_KEY' as const, id: org.keyId, channel: 'API' as const } };
      const items = Array.from({ length: 12 }, (_, i) => ({ index: i, input: { name: `Early ${i}`, email: `early.${i}@batch.example`, ...(i < 6 ? { tier: 'gold' } : {}) } }));
      await call(t.app, 'PATCH', '/objects/leads', { auth: org.auth, body: { fields: [{ key: 'region', label: 'Region', type: 'text' }] } });
      const prepared = await prepareCreates(spec, t.ctx.database.db, caller, {}, items.slice(6), undefined);
      expect(prepared.size).toBe(6);
      const defined = await call(t.app, 'PATCH', '/objects/leads', { auth: org.auth, body: { fields: [{ key: 'region', label: 'Region', type: 'text' }, { key: 'tier', label: 'Tier', type: 'text', required: true }] } });
      expect(defined.status).toBe(200);
      const results = await t.ctx.database.transaction((trx) => runCreateBatch(spec, { trx, dialect: t.ctx.database.dialect, entityTagger: t.ctx.entityTagger, caller, params: {} }, items, undefined, prepared));
      const byIndex = new Map(results.map((r) => [r.index, r]));
      for (let i = 0; i < 6; i++) expect(byIndex.get(i)).toMatchObject({ status: 201, resource: { tier: 'gold' } });
      for (let i = 6; i < 12; i++) expect(byIndex.get(i)).toMatchObject({ status: 400, error: { errors: [{ field: 'tier', code: 'required' }] } });
    } finally {
      await seals.close();
    }
  });
});
