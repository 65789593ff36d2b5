import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../src/config.js';
import { closeContext, createContext } from '../src/context.js';
import { openDatabase } from '../src/db/database.js';
import { newId } from '../src/lib/ids.js';
import { sealContact } from '../src/crypto/contact-fields.js';
import { createOrganization } from '../src/modules/orgs/orgs.service.js';
import { insertLeads, type StoredLead } from '../src/modules/leads/leads.store.js';
import { listLeads } from '../src/modules/leads/leads.service.js';
import { fmt, percentiles, timeIt } from './lib.js';
import { nameAt, prng } from './names.js';

/**
 * Exact-lookup and substring-search latency with N leads seeded in bulk through the store (encrypted and
 * blind-indexed like API writes), measured server-side: the service call the route makes, without HTTP.
 */
export async function runLeadSearch(opts: { rows: number; dialect: 'sqlite' | 'postgres'; pgUrl?: string }): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'crm-bench-search-'));
  const schema = `bench_${randomBytes(4).toString('hex')}`;
  const url = opts.dialect === 'sqlite' ? join(dir, 'crm.db') : opts.pgUrl!;
  const config = loadConfig({ DATABASE_URL: url, ENCRYPTION_KEY: randomBytes(32).toString('base64'), LOG_LEVEL: 'silent' }, () => undefined);
  if (opts.dialect === 'postgres') {
    const admin = openDatabase(config.database);
    await admin.db.schema.createSchema(schema).execute();
    await admin.close();
  }
  const ctx = await createContext(config, { database: openDatabase({ ...config.database, ...(opts.dialect === 'postgres' ? { schema } : {}) }) });
  try {
    const org = await createOrganization(ctx, { name: 'Search bench' });
    const rand = prng(42);
    const started = Date.now();
    const CHUNK = 10_000;
    const now = new Date().toISOString();
    for (let i = 0; i < opts.rows; i += CHUNK) {
      const batch: Omit<StoredLead, 'seq'>[] = [];
      for (let j = i; j < Math.min(opts.rows, i + CHUNK); j++) {
        const id = newId();
        const where = { table: 'leads', rowId: id, organizationId: org.id };
        const email = sealContact(ctx, 'email', where, `lead${j}@example.com`);
        const phone = sealContact(ctx, 'phone', where, `+1415${String(5_000_000 + j).padStart(7, '0')}`);
        batch.push({
          id, organizationId: org.id, name: nameAt(j, rand), emailEnc: email.enc, emailBidx: email.bidx, phoneEnc: phone.enc, phoneBidx: phone.bidx,
          source: 'IMPORT', sourceCampaign: null, status: 'NEW', company: null, title: null, notes: null, ownerId: null, accountId: null,
          duplicateOf: null, externalId: null, custom: null, createdAt: now, updatedAt: now, deletedAt: null,
        });
      }
      await ctx.database.db.transaction().execute((trx) => insertLeads(trx, batch));
    }
    const seedSeconds = (Date.now() - started) / 1000;
    console.log(`\n## Lead search, ${opts.dialect}, ${opts.rows.toLocaleString('en')} leads (seeded in ${fmt(seedSeconds, 1)} s, ${fmt(opts.rows / seedSeconds, 0)} rows/s)\n`);
    console.log('| query | matches | p50 ms | p95 ms | p99 ms | bar |');
    console.log('|---|---|---|---|---|---|');
    const measure = async (label: string, qs: () => string, runs: number, bar?: string) => {
      for (let i = 0; i < 5; i++) await listLeads(ctx, org.id, { q: qs(), page: 1, limit: 25 });
      const samples: number[] = [];
      let matches = 0;
      for (let i = 0; i < runs; i++) {
        const q = qs();
        samples.push(await timeIt(async () => { matches = (await listLeads(ctx, org.id, { q, page: 1, limit: 25 })).pagination.total ?? 0; }));
      }
      const p = percentiles(samples);
      console.log(`| ${label} | ${matches.toLocaleString('en')} | ${fmt(p.p50)} | ${fmt(p.p95)} | ${fmt(p.p99)} | ${bar ?? ''} |`);
      return p;
    };
    const pick = prng(7);
    const email = await measure('q=<e-mail> (exact, random lead)', () => `lead${Math.floor(pick() * opts.rows)}@example.com`, 300);
    await measure('q=<phone> (exact, random lead)', () => `+1415${String(5_000_000 + Math.floor(pick() * opts.rows)).padStart(7, '0')}`, 300);
    const name = await measure('q=ovela (name part)', () => 'ovela', 100);
    await measure('q=Hopper (name part)', () => 'Hopper', 100);
    await measure('q=stroustrupberg (rare)', () => 'stroustrupberg', 100);
    await measure('q=son (very common)', () => 'son', 30);
    await measure('q=al (2 characters)', () => 'al', 30);
    console.log(`\nBars: q=<e-mail> p99 ${fmt(email.p99)} ms (< 5: ${email.p99 < 5 ? 'met' : 'NOT met'}); q=<name part> p95 ${fmt(name.p95)} ms (< 30: ${name.p95 < 30 ? 'met' : 'NOT met'})`);
  } finally {
    if (opts.dialect === 'postgres') await ctx.database.db.schema.dropSchema(schema).cascade().execute();
    await closeContext(ctx);
    rmSync(dir, { recursive: true, force: true });
  }
}
