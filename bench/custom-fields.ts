import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AppContext } from '../src/context.js';
import { newId } from '../src/lib/ids.js';
import { addItemValues } from '../src/modules/fields/custom-fields.store.js';
import { customFieldsOf, updateBuiltinObject } from '../src/modules/fields/custom-fields.service.js';
import { customIndexed, sealCustom } from '../src/modules/fields/custom-values.js';
import { listLeads } from '../src/modules/leads/leads.service.js';
import { insertLeads, type StoredLead } from '../src/modules/leads/leads.store.js';
import { createOrganization } from '../src/modules/orgs/orgs.service.js';
import { cli, fmt, openBench, percentiles, stop, timeIt } from './lib.js';
import { nameAt, prng } from './names.js';
import { newLead, PORT, startServer, table, type Scenario } from './throughput.js';

/** Five custom lead fields, one of each kind a bench cares about (a date, a number, a select, an e-mail, a url). */
const FIELDS = [
  { key: 'visitDate', label: 'Visit date', type: 'date' as const },
  { key: 'budget', label: 'Budget', type: 'number' as const },
  { key: 'tier', label: 'Tier', type: 'select' as const, options: ['gold', 'silver', 'bronze'] },
  { key: 'privateEmail', label: 'Private e-mail', type: 'email' as const },
  { key: 'linkedinUrl', label: 'LinkedIn', type: 'url' as const },
];

const day = (n: number) => new Date(Date.UTC(2024, 0, 1) + (n % 1_000) * 86_400_000).toISOString().slice(0, 10);
const customValues = (n: number) => ({ visitDate: day(n), budget: n % 10_000, tier: ['gold', 'silver', 'bronze'][n % 3], privateEmail: `private${n}@example.com`, linkedinUrl: `https://www.linkedin.com/in/bench-${n}` });
const newLeadWithFields = (n: number) => JSON.stringify({ ...JSON.parse(newLead(n)), ...customValues(n) });

/**
 * Item 7 of issue #17: `GET /leads/{id}` and `POST /leads` of an organization with five custom lead fields next
 * to one with none, each against a bare node:http server answering the same bytes (interleaved rounds, one
 * server on SQLite); then `filter[visitDate]` (equality and a range) on N leads, server-side like bench/lists.ts.
 */
export async function runCustomFieldsBench(opts: { seconds: number; rounds: number; rows: number; runs: number }): Promise<void> {
  await throughputCase(opts);
  await filterCase(opts);
}

async function throughputCase(opts: { seconds: number; rounds: number }) {
  const dir = mkdtempSync(join(tmpdir(), 'crm-bench-fields-'));
  const env = { ...process.env, DATABASE_URL: join(dir, 'crm.db'), PORT: String(PORT), RATE_LIMIT_PER_MINUTE: '1000000000', LOG_LEVEL: 'info', NODE_ENV: 'development' };
  const keyOf = (name: string) => {
    const org = cli(env, ['org', 'create', '--name', name]).id as string;
    return { authorization: `Bearer ${cli(env, ['key', 'create', '--org', org, '--scopes', 'leads:read,leads:write,objects:admin']).key as string}`, 'content-type': 'application/json' };
  };
  const none = keyOf('No custom fields');
  const five = keyOf('Five custom fields');
  const base = `http://127.0.0.1:${PORT}/api/public/v1`;
  const server = await startServer(env);
  try {
    const defined = await fetch(`${base}/objects/leads`, { method: 'PATCH', headers: five, body: JSON.stringify({ fields: FIELDS }) });
    if (!defined.ok) throw new Error(`defining the bench fields: ${defined.status} ${await defined.text()}`);
    const create = async (headers: Record<string, string>, body: string) => ((await (await fetch(`${base}/leads`, { method: 'POST', headers, body })).json()) as { data: { lead: { id: string } } }).data.lead.id;
    const plain = await create(none, newLead(-1));
    const rich = await create(five, newLeadWithFields(-2));
    const scenarios: Scenario[] = [
      { name: 'GET /leads/{id}, no custom fields', method: 'GET', path: `/leads/${plain}`, headers: none },
      { name: 'GET /leads/{id}, five custom fields set', method: 'GET', path: `/leads/${rich}`, headers: five },
      { name: 'POST /leads, no custom fields', method: 'POST', path: '/leads', bodyAt: newLead, headers: none },
      { name: 'POST /leads, five custom fields set', method: 'POST', path: '/leads', bodyAt: newLeadWithFields, headers: five },
    ];
    console.log(`\n## Custom lead fields: five defined next to none (SQLite, ${opts.seconds}s per run, 32 connections)\n`);
    await table(scenarios, server, base, none, { seconds: opts.seconds, rounds: opts.rounds });
  } finally {
    await stop(server);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** N leads with the five fields set (their index rows too), inserted through the stores in bulk; then the filters. */
async function filterCase(opts: { rows: number; runs: number }) {
  const { ctx, drop } = await openBench('custom-fields', 'sqlite');
  try {
    const org = await createOrganization(ctx, { name: 'Custom fields bench' });
    await ctx.database.db.transaction().execute((trx) => updateBuiltinObject(ctx, trx, org.id, 'leads', { fields: FIELDS }));
    const c = await customFieldsOf(ctx, ctx.database.db, org.id, 'leads');
    await seedLeads(ctx, c, org.id, opts.rows);
    console.log(`\n## filter[field] on a custom lead field (SQLite, ${opts.rows.toLocaleString('en')} leads, service call without HTTP)\n`);
    console.log('| case | matching leads | p50 ms | p95 ms | p99 ms | bar |');
    console.log('|---|---|---|---|---|---|');
    const cases: [string, Record<string, string>, number][] = [
      ['filter[visitDate]=<one day>, first page', { 'filter[visitDate]': day(17) }, Math.ceil(opts.rows / 1_000)],
      ['filter[visitDate][gte|lt]=<a week>, first page', { 'filter[visitDate][gte]': day(100), 'filter[visitDate][lt]': day(107) }, Math.ceil((opts.rows * 7) / 1_000)],
      ['filter[privateEmail]=<one address>', { 'filter[privateEmail]': `private${Math.floor(opts.rows / 2)}@example.com` }, 1],
    ];
    for (const [label, query, matching] of cases) {
      for (let i = 0; i < 5; i++) await listLeads(ctx, org.id, { ...query, page: 1, limit: 25 } as never);
      const samples: number[] = [];
      for (let i = 0; i < opts.runs; i++) samples.push(await timeIt(() => listLeads(ctx, org.id, { ...query, page: 1, limit: 25 } as never)));
      const p = percentiles(samples);
      console.log(`| ${label} | ${matching.toLocaleString('en')} | ${fmt(p.p50)} | ${fmt(p.p95)} | ${fmt(p.p99)} | p95 < 50 ms (${p.p95 < 50 ? 'met' : 'NOT met'}) |`);
    }
  } finally {
    await drop();
  }
}

async function seedLeads(ctx: AppContext, c: Awaited<ReturnType<typeof customFieldsOf>>, organizationId: string, rows: number) {
  const rand = prng(11);
  const base = Date.UTC(2025, 0, 1);
  for (let i = 0; i < rows; i += 5_000) {
    const batch: Omit<StoredLead, 'seq'>[] = [];
    const values: { itemId: string; values: ReturnType<typeof customIndexed> }[] = [];
    for (let j = i; j < Math.min(rows, i + 5_000); j++) {
      const at = new Date(base + j * 1000).toISOString();
      const id = newId();
      const clear = customValues(j) as Record<string, string | number>;
      batch.push({
        id, organizationId, name: nameAt(j, rand), emailEnc: null, emailBidx: null, phoneEnc: null, phoneBidx: null,
        source: 'IMPORT', sourceCampaign: null, status: 'NEW', company: null, title: null, notes: null, ownerId: null, accountId: null,
        duplicateOf: null, externalId: null, custom: sealCustom(ctx.cipher, c, id, clear), createdAt: at, updatedAt: at, deletedAt: null,
      });
      values.push({ itemId: id, values: customIndexed(ctx.blindIndex, c, clear) });
    }
    await ctx.database.db.transaction().execute(async (trx) => {
      await insertLeads(trx, batch);
      await addItemValues(trx, organizationId, 'leads', values);
    });
  }
}
