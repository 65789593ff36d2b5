/**
 * WAL volume (`npm run bench -- --only wal [--wal-leads N]`): what SQLite writes to the WAL per lead, and per
 * commit, on each path that creates or updates leads, in one process on a SQLite file that already holds N
 * leads (100,000 by default). Counted by native/wal-buffer.c (every byte SQLite asks to write to a WAL, and its
 * commit frames), so it is the real schema and the real code, not a model of them.
 *
 * Why it matters: every WAL byte is copied at the commit, then copied again into the database file by the
 * checkpoint, and both happen under or beside the one write lock. A new lead's two blind-index entries land at
 * random places of their indexes, so each dirties a page of its own at a commit of a few hundred leads; the
 * import's commits of 10,000 rows share those pages between many rows.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { buildApp } from '../src/app.js';
import { walBufferStats } from '../src/db/wal-buffer.js';
import { importCsv } from '../src/modules/import/csv-import.js';
import { leadImportAdapter } from '../src/modules/leads/leads.import.js';
import { createApiKey, createOrganization } from '../src/modules/orgs/orgs.service.js';
import { fmt, openBench } from './lib.js';

const BATCH = 100;

export async function runWalVolumeBench(opts: { leads: number }): Promise<void> {
  const { ctx, drop } = await openBench('wal', 'sqlite');
  const app = await buildApp(ctx, { logger: false });
  const csv = join(tmpdir(), `crm-bench-wal-${process.pid}.csv`);
  try {
    const org = await createOrganization(ctx, { name: 'Bench', timezone: 'UTC' });
    const key = await createApiKey(ctx, { organizationId: org.id, scopes: ['leads:write', 'leads:read'], name: 'bench', rateLimitPerMinute: 1_000_000_000 });
    await app.ready();
    const headers = { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' };
    let serial = 0;
    const newLead = () => {
      serial += 1;
      return { name: `Bench Lead ${serial}`, email: `lead${serial}@bench.example`, phoneNumber: `+1415${5_000_000 + serial}`, source: 'WEBSITE', externalId: `ext-${serial}` };
    };
    const batch = async (body: unknown) => {
      const res = await app.inject({ method: 'POST', url: '/api/public/v1/leads/batch', headers, payload: JSON.stringify(body) });
      if (res.statusCode !== 200) throw new Error(`POST /leads/batch answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
    };
    const clients = async (n: number, batches: number, body: () => unknown) => {
      await Promise.all(Array.from({ length: n }, async () => {
        for (let i = 0; i < batches; i++) await batch(body());
      }));
    };
    const newLeads = () => ({ items: Array.from({ length: BATCH }, newLead) });
    await clients(4, Math.ceil(opts.leads / BATCH / 4), newLeads);

    const rows: string[] = [];
    const measure = async (what: string, leads: number, run: () => Promise<unknown>) => {
      const before = walBufferStats();
      await run();
      const after = walBufferStats();
      const bytes = after.bytes - before.bytes;
      const commits = after.commits - before.commits;
      rows.push(`| ${what} | ${leads.toLocaleString('en')} | ${commits} | ${fmt(leads / commits, 0)} | ${fmt(bytes / leads / 1024, 1)} | ${fmt(bytes / commits / 1024 / 1024, 2)} |`);
    };
    await measure('new leads, `POST /leads/batch`, one client', 100 * BATCH, () => clients(1, 100, newLeads));
    await measure('new leads, `POST /leads/batch`, 8 clients at once', 8 * 25 * BATCH, () => clients(8, 25, newLeads));
    const existing = serial;
    let renamed = 0;
    const hits = () => {
      const emails = new Set<string>();
      while (emails.size < BATCH) emails.add(`lead${1 + Math.floor(Math.random() * existing)}@bench.example`);
      return { upsertBy: 'email', items: [...emails].map((email) => ({ email, name: `Renamed ${renamed++}` })) };
    };
    await measure('upsert hits (each renames its lead), 8 clients at once', 8 * 25 * BATCH, () => clients(8, 25, hits));
    const importRows = 20_000;
    writeFileSync(csv, ['name,email,phoneNumber,source,externalId', ...Array.from({ length: importRows }, () => {
      const l = newLead();
      return `${l.name},${l.email},${l.phoneNumber},${l.source},${l.externalId}`;
    })].join('\n'));
    const adapter = await leadImportAdapter(ctx, org.id);
    await measure('`crm import leads` (its commits of up to 10,000 rows)', importRows, async () => {
      const report = await importCsv(ctx, { file: csv, organizationId: org.id, adapter, allOrNothing: false });
      if (report.imported !== importRows) throw new Error(`the import stored ${report.imported} of ${importRows} rows`);
    });

    console.log(`\n## WAL written per lead (SQLite, in process, the organization holding ${opts.leads.toLocaleString('en')} leads and more as it runs)\n`);
    console.log('| path | leads | commits | leads a commit | WAL KiB a lead | WAL MiB a commit |\n|---|---|---|---|---|---|');
    for (const row of rows) console.log(row);
  } finally {
    rmSync(csv, { force: true });
    await app.close();
    await drop();
  }
}
