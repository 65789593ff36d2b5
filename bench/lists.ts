import { sql } from 'kysely';
import type { Dialect } from '../src/config.js';
import type { AppContext } from '../src/context.js';
import { inTransaction } from '../src/db/transaction.js';
import { newId } from '../src/lib/ids.js';
import { listCursors } from '../src/crypto/list-cursors.js';
import { createOrganization } from '../src/modules/orgs/orgs.service.js';
import { insertLeads, type StoredLead } from '../src/modules/leads/leads.store.js';
import { listLeads } from '../src/modules/leads/leads.service.js';
import { listTasks } from '../src/modules/tasks/tasks.service.js';
import { createObject } from '../src/modules/objects/objects.service.js';
import { findObject } from '../src/modules/objects/objects.store.js';
import { insertRecords } from '../src/modules/objects/records.store.js';
import { buildNewRecord, listRecords } from '../src/modules/objects/records.service.js';
import { fmt, openBench, percentiles, timeIt } from './lib.js';
import { nameAt, prng } from './names.js';

/**
 * Cursor pages against offset pages on N leads, their reverse lookup by account, and custom field filters
 * (a date range, a relation's reverse lookup, a multi_select option) on M records (contract §8, §9),
 * measured server-side: the service call the route makes, without HTTP. Seeding goes through the stores in
 * bulk (no contact fields: they play no part in a list's order or filters).
 */
export async function runListsBench(opts: { dialect: Dialect; leads: number; records: number; runs: number; pgUrl?: string }): Promise<void> {
  const { ctx, drop } = await openBench('lists', opts.dialect, opts.pgUrl);
  try {
    console.log(`\n## Lists: cursor vs offset pages, record filters (${opts.dialect})\n`);
    console.log('| case | rows | p50 ms | p95 ms | p99 ms | bar |');
    console.log('|---|---|---|---|---|---|');
    await leadsCase(ctx, opts);
    await recordsCase(ctx, opts);
    await tasksCase(ctx, { tasks: Math.max(1_000, Math.floor(opts.leads / 5)), runs: opts.runs });
  } finally {
    await drop();
  }
}

async function sample(runs: number, fn: (i: number) => Promise<unknown>) {
  for (let i = 0; i < 5; i++) await fn(i);
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) samples.push(await timeIt(() => fn(i)));
  return percentiles(samples);
}

const row = (label: string, rows: number, p: { p50: number; p95: number; p99: number }, bar = '') =>
  console.log(`| ${label} | ${rows.toLocaleString('en')} | ${fmt(p.p50)} | ${fmt(p.p95)} | ${fmt(p.p99)} | ${bar} |`);

async function leadsCase(ctx: AppContext, opts: { leads: number; runs: number }) {
  const org = await createOrganization(ctx, { name: 'Lists bench' });
  // One lead in ten belongs to one of 1,000 accounts (~100 leads each at 1,000,000): GET /leads?accountId=.
  const accounts = Array.from({ length: 1_000 }, () => newId());
  const rand = prng(7);
  const base = Date.UTC(2025, 0, 1);
  for (let i = 0; i < opts.leads; i += 10_000) {
    const batch: Omit<StoredLead, 'seq'>[] = [];
    for (let j = i; j < Math.min(opts.leads, i + 10_000); j++) {
      const at = new Date(base + j * 1000).toISOString();
      batch.push({
        id: newId(), organizationId: org.id, name: nameAt(j, rand), emailEnc: null, emailBidx: null, phoneEnc: null, phoneBidx: null,
        source: 'IMPORT', sourceCampaign: null, status: j % 5 === 0 ? 'QUALIFIED' : 'NEW', company: null, title: null, notes: null, ownerId: null, accountId: j % 10 === 0 ? accounts[(j / 10) % 1_000]! : null,
        duplicateOf: null, externalId: null, custom: null, createdAt: at, updatedAt: at, deletedAt: null,
      });
    }
    await ctx.database.db.transaction().execute((trx) => insertLeads(trx, batch));
  }
  if (ctx.database.dialect === 'postgres') await sql`vacuum analyze leads`.execute(ctx.database.db);
  // Cursors at spread depths, made from the rows themselves (what nextCursor would have been there).
  const depths = Array.from({ length: 20 }, (_, i) => Math.floor(((i + 0.5) / 20) * (opts.leads - 30)));
  const cursors: Record<string, string[]> = {};
  for (const sort of ['-createdAt', 'name']) {
    cursors[sort] = [];
    for (const depth of depths) {
      const order = sort === 'name' ? sql`name asc, seq asc` : sql`created_at desc, seq desc`;
      const column = sort === 'name' ? 'name' : 'created_at';
      const { rows } = await sql<{ v: string; seq: number }>`select ${sql.ref(column)} as v, seq from leads where organization_id = ${org.id} and deleted_at is null order by ${order} limit 1 offset ${depth}`.execute(ctx.database.db);
      cursors[sort]!.push(listCursors(ctx, org.id).seal({ sort, value: rows[0]!.v, seq: Number(rows[0]!.seq) }));
    }
  }
  const page = (query: Record<string, unknown>) => listLeads(ctx as never, org.id, { page: 1, limit: 25, ...query } as never);
  row('leads, offset page 10,000 (limit 25, with count)', opts.leads, await sample(Math.min(opts.runs, 20), () => page({ page: 10_000 })), 'reported');
  row('leads, page 1 (with count)', opts.leads, await sample(Math.min(opts.runs, 20), () => page({})), '');
  row('leads, cursor page at 20 depths, -createdAt', opts.leads, await sample(opts.runs, (i) => page({ after: cursors['-createdAt']![i % 20] })), 'p95 < 5 ms');
  row('leads, cursor page at 20 depths, sort=name', opts.leads, await sample(opts.runs, (i) => page({ sort: 'name', after: cursors.name![i % 20] })), 'p95 < 5 ms');
  row('leads, cursor page, status=QUALIFIED', opts.leads, await sample(opts.runs, (i) => page({ status: 'QUALIFIED', after: cursors['-createdAt']![i % 20] })), '');
  row('leads, accountId=<one of 1,000> (page 1, with count)', opts.leads, await sample(opts.runs, (i) => page({ accountId: accounts[i % 1_000] })), 'p95 < 50 ms');
  row('leads, accountId=<one of 1,000>, sort=name', opts.leads, await sample(opts.runs, (i) => page({ accountId: accounts[i % 1_000], sort: 'name' })), 'p95 < 50 ms');
}

const TAGS = ['t0', 't1', 't2', 't3', 't4', 't5', 't6', 't7', 't8', 't9'];

async function recordsCase(ctx: AppContext, opts: { records: number; runs: number }) {
  const org = await createOrganization(ctx, { name: 'Records bench', timezone: 'UTC' });
  await inTransaction(ctx, (trx) =>
    createObject(ctx, trx, org.id, {
      slug: 'visits',
      name: 'Visits',
      fields: [
        { key: 'title', label: 'Title', type: 'text' },
        { key: 'visit_date', label: 'Visit date', type: 'date' },
        { key: 'score', label: 'Score', type: 'number' },
        { key: 'lead', label: 'Lead', type: 'relation', target: 'leads' },
        { key: 'tags', label: 'Tags', type: 'multi_select', options: TAGS },
      ],
    }),
  );
  const object = (await findObject(ctx.database.db, ctx.database.dialect, org.id, 'visits'))!;
  const rand = prng(11);
  // Each record points at one of 5,000 leads (~100 records each at 500,000) and holds 0–3 of 10 tags.
  const leads = Array.from({ length: 5_000 }, () => newId());
  const day0 = Date.UTC(2020, 0, 1);
  for (let done = 0; done < opts.records; done += 5_000) {
    const now = new Date(Date.UTC(2026, 0, 1) + done * 1000);
    const batch = Array.from({ length: Math.min(5_000, opts.records - done) }, (_, k) => {
      // Visit dates spread over ~6 years: one month holds ~1.4 % of the records.
      const day = new Date(day0 + Math.floor(rand() * 6 * 365) * 86_400_000).toISOString().slice(0, 10);
      const tags = TAGS.filter(() => rand() < 0.15);
      return buildNewRecord(ctx, object, { title: `visit ${done + k}`, visit_date: day, score: Math.floor(rand() * 1000), lead: leads[(done + k) % leads.length], tags }, now);
    });
    await ctx.database.db.transaction().execute((trx) => insertRecords(trx, ctx.database.dialect, object, batch));
  }
  if (ctx.database.dialect === 'postgres') await sql`vacuum analyze records, record_values`.execute(ctx.database.db);
  const months = Array.from({ length: 24 }, (_, i) => new Date(Date.UTC(2020 + Math.floor(i / 4), (i % 4) * 3, 1)).toISOString().slice(0, 10));
  const monthAfter = (d: string) => new Date(Date.UTC(Number(d.slice(0, 4)), Number(d.slice(5, 7)), 1)).toISOString().slice(0, 10);
  const list = (query: Record<string, unknown>) => listRecords(ctx, org, 'visits', { page: 1, limit: 25, ...query } as never);
  const month = (i: number) => ({ 'filter[visit_date][gte]': months[i % 24]!, 'filter[visit_date][lt]': monthAfter(months[i % 24]!) });
  row('records, filter one month of a date field (page 1, with count)', opts.records, await sample(opts.runs, (i) => list(month(i))), 'p95 < 50 ms');
  const first = await list(month(0));
  row('records, same filter, next cursor page', opts.records, await sample(opts.runs, () => list({ ...month(0), after: first.pagination.nextCursor })), 'p95 < 50 ms');
  row('records, filter[score]=<value> (page 1, with count)', opts.records, await sample(opts.runs, (i) => list({ 'filter[score]': String(i % 1000) })), '');
  row('records, filter[lead]=<id>: reverse lookup (page 1, with count)', opts.records, await sample(opts.runs, (i) => list({ 'filter[lead]': leads[i % leads.length] })), 'p95 < 50 ms');
  row('records, filter[tags]=<option> (~15 %, page 1, with count)', opts.records, await sample(opts.runs, (i) => list({ 'filter[tags]': TAGS[i % TAGS.length] })), 'reported');
  const tagged = await list({ 'filter[tags]': TAGS[0] });
  row('records, filter[tags]=<option>, next cursor page', opts.records, await sample(opts.runs, () => list({ 'filter[tags]': TAGS[0], after: tagged.pagination.nextCursor })), 'p95 < 50 ms');
  row('records, sort=visit_date (page 1, with count)', opts.records, await sample(Math.min(opts.runs, 20), () => list({ sort: 'visit_date' })), '');
}

/**
 * Cursor pages of tasks (migration 0022) at spread depths: by due day (an expression index, undated last), newest
 * first, and one assignee's tasks newest first. A fifth of the tasks have no due day; four users share them.
 */
async function tasksCase(ctx: AppContext, opts: { tasks: number; runs: number }) {
  const org = await createOrganization(ctx, { name: 'Tasks bench', timezone: 'UTC' });
  const rand = prng(13);
  const base = Date.UTC(2025, 0, 1);
  const assignees = ['a0', 'a1', 'a2', 'a3'].map((a) => `${a}${'0'.repeat(22)}`);
  for (let i = 0; i < opts.tasks; i += 1_000) {
    const rows = Array.from({ length: Math.min(1_000, opts.tasks - i) }, (_, k) => {
      const at = new Date(base + (i + k) * 1000).toISOString();
      const due = rand() < 0.2 ? null : new Date(base + Math.floor(rand() * 3 * 365) * 86_400_000).toISOString().slice(0, 10);
      return { id: newId(), organization_id: org.id, title: `task ${i + k}`, due_date: due, assignee_id: assignees[(i + k) % 4]!, status: 'open', created_at: at, updated_at: at };
    });
    await ctx.database.db.insertInto('tasks').values(rows).execute();
  }
  if (ctx.database.dialect === 'postgres') await sql`vacuum analyze tasks`.execute(ctx.database.db);
  const depths = Array.from({ length: 20 }, (_, i) => Math.floor(((i + 0.5) / 20) * (opts.tasks - 30)));
  const cursorsOf = async (sort: string, key: string, order: string, where = sql``, scale = 1) => {
    const cursors: string[] = [];
    for (const depth of depths) {
      const { rows } = await sql<{ v: string; seq: number }>`select ${sql.raw(key)} as v, seq from tasks where organization_id = ${org.id} and deleted_at is null ${where} order by ${sql.raw(order)} limit 1 offset ${Math.floor(depth / scale)}`.execute(ctx.database.db);
      cursors.push(listCursors(ctx, org.id).seal({ sort, value: rows[0]!.v, seq: Number(rows[0]!.seq) }));
    }
    return cursors;
  };
  const due = await cursorsOf('dueDate', "coalesce(due_date, '9999-12-31')", "coalesce(due_date, '9999-12-31') asc, seq asc");
  const newest = await cursorsOf('-createdAt', 'created_at', 'created_at desc, seq desc');
  const mine = await cursorsOf('-createdAt', 'created_at', 'created_at desc, seq desc', sql`and assignee_id = ${assignees[0]!}`, assignees.length);
  const page = (query: Record<string, unknown>) => listTasks(ctx, org, { page: 1, limit: 25, ...query } as never);
  row('tasks, offset page 2,000 by due day (with count)', opts.tasks, await sample(Math.min(opts.runs, 20), () => page({ sort: 'dueDate', page: 2_000 })), 'reported');
  row('tasks, cursor page at 20 depths, sort=dueDate', opts.tasks, await sample(opts.runs, (i) => page({ sort: 'dueDate', after: due[i % due.length] })), 'p95 < 5 ms');
  row('tasks, cursor page at 20 depths, -createdAt', opts.tasks, await sample(opts.runs, (i) => page({ after: newest[i % newest.length] })), 'p95 < 5 ms');
  row("tasks, one assignee's cursor page at 20 depths", opts.tasks, await sample(opts.runs, (i) => page({ assigneeId: assignees[0], after: mine[i % mine.length] })), 'p95 < 5 ms');
}
