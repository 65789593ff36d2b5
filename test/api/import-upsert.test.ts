import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';
import { runCli } from '../helpers/cli.js';
import { databaseEnv } from '../helpers/processes.js';
import { importCsv, type ImportAdapter } from '../../src/modules/import/csv-import.js';
import { leadImportAdapter } from '../../src/modules/leads/leads.import.js';
import { accountImportAdapter } from '../../src/modules/accounts/accounts.import.js';
import { dealImportAdapter } from '../../src/modules/deals/deals.import.js';
import { recordImportAdapter } from '../../src/modules/objects/records.import.js';
import { listEvents } from '../../src/modules/events/outbox.store.js';
import type { UpsertKey } from '../../src/modules/shared/batch.schemas.js';

let t: TestApp;
const dir = mkdtempSync(join(tmpdir(), 'crm-import-upsert-'));
let n = 0;
const csv = (lines: string[]) => {
  const file = join(dir, `f${++n}.csv`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
};

beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

/** As in import.test.ts: imports start a worker thread, some tests a `crm` process, on a shared 2-core machine. */
const IMPORT_TIMEOUT = 90_000;
const CHILD_TIMEOUT = 180_000;

const upsert = async (o: Seeded, file: string, by: UpsertKey, opts: { allOrNothing?: boolean; adapter?: ImportAdapter } = {}) =>
  importCsv(t.ctx, { file, organizationId: o.orgId, adapter: opts.adapter ?? (await leadImportAdapter(t.ctx, o.orgId)), allOrNothing: opts.allOrNothing ?? false, upsertBy: by, batchSize: 3 });

/** The organization's live leads, by name (leads of one import share their creation time). */
const leads = async (o: Seeded) =>
  ((await call(t.app, 'GET', '/leads?limit=100', { auth: o.auth })).body.data.leads as Record<string, unknown>[]).sort((a, b) => String(a.name).localeCompare(String(b.name)));
const leadTotal = async (o: Seeded) => (await call(t.app, 'GET', '/leads?limit=1', { auth: o.auth })).body.data.pagination.total as number;
const eventsOf = async (o: Seeded) => listEvents(t.ctx.database.db, o.orgId);
const outcomes = (report: { upsert?: { outcomes: { line: number; outcome: string }[] } }) => report.upsert!.outcomes.map((r) => [r.line, r.outcome]);

describe('crm import --upsert-by externalId', { timeout: IMPORT_TIMEOUT }, () => {
  it('re-imports a file from the command line: every row unchanged or updated, no new lead, no 409, one lead.updated per changed row', async () => {
    const o = await seedOrg(t.ctx);
    const first = ['name,email,company,externalId', 'Ada,ada@example.com,Engines,erp-1', 'Grace,grace@example.com,Navy,erp-2', 'Alan,,Bletchley,erp-3'];
    const env = databaseEnv(t);
    expect((await runCli(['import', 'leads', csv(first), '--org', o.orgId], env)).code).toBe(0);
    const before = await leads(o);
    const createdEvents = (await eventsOf(o)).length;

    const again = await runCli(['--json', 'import', 'leads', csv(first), '--org', o.orgId, '--upsert-by', 'externalId'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ rows: 3, imported: 3, failed: [], upsert: { by: 'externalId', created: 0, updated: 0, unchanged: 3 } });

    // Grace's company changes; Alan's empty e-mail cell and Ada's empty company cell leave those fields as they are.
    const changed = await runCli(['import', 'leads', csv(['name,email,company,externalId', 'Ada,ada@example.com,,erp-1', 'Grace,grace@example.com,Navy Reserve,erp-2', 'Alan,,Bletchley,erp-3']), '--org', o.orgId, '--upsert-by', 'externalId'], env);
    expect(changed.code, changed.stderr).toBe(0);
    expect(changed.stdout).toMatch(/^Upserted 3 of 3 leads by externalId in [\d.]+ s \(\d+ rows\/s\): 0 created, 1 updated, 2 unchanged; 0 row\(s\) refused$/m);

    const after = await leads(o);
    expect(after.map((l) => l.id)).toEqual(before.map((l) => l.id));
    expect(after.map((l) => [l.name, l.email, l.company])).toEqual([['Ada', 'ada@example.com', 'Engines'], ['Alan', null, 'Bletchley'], ['Grace', 'grace@example.com', 'Navy Reserve']]);
    const events = (await eventsOf(o)).slice(createdEvents);
    expect(events.map((e) => [e.type, e.data.id])).toEqual([['lead.updated', before[2]!.id]]);
    expect(events[0]!.data.changes).toEqual({ before: { company: 'Navy' }, after: { company: 'Navy Reserve' } });
    expect(events[0]!.data.actor).toEqual({ type: 'SYSTEM', id: 'import', channel: 'API' });
  }, CHILD_TIMEOUT);

  it('reports every row by line: created, updated, unchanged, refused (no key, a holder in the trash), the others land', async () => {
    const o = await seedOrg(t.ctx);
    const kept = (await call(t.app, 'POST', '/leads', { auth: o.auth, body: { name: 'Kept', externalId: 'erp-1', status: 'NEW' } })).body.data.lead;
    const moved = (await call(t.app, 'POST', '/leads', { auth: o.auth, body: { name: 'Moved', externalId: 'erp-2' } })).body.data.lead;
    const trashed = (await call(t.app, 'POST', '/leads', { auth: o.auth, body: { name: 'Trashed', externalId: 'erp-3' } })).body.data.lead;
    expect((await call(t.app, 'DELETE', `/leads/${trashed.id}`, { auth: o.auth })).status).toBe(200);

    const report = await upsert(o, csv(['name,status,externalId', 'Kept,NEW,erp-1', 'Moved,CONTACTED,erp-2', 'Back,,erp-3', 'Keyless,,', 'Fresh,,erp-4', 'Bad,NOPE,erp-5']), 'externalId');
    expect(report).toMatchObject({ rows: 6, imported: 3, upsert: { created: 1, updated: 1, unchanged: 1 } });
    expect(report.upsert!.outcomes.map((r) => [r.line, r.outcome, r.id])).toEqual([[2, 'unchanged', kept.id], [3, 'updated', moved.id], [6, 'created', expect.any(String)]]);
    expect(report.failed).toEqual([
      { line: 4, errors: [{ field: 'externalId', code: 'taken', message: 'is already used by another lead' }] },
      { line: 5, errors: [{ field: 'externalId', code: 'required', message: 'is required to upsert by externalId' }] },
      { line: 7, errors: [expect.objectContaining({ field: 'status' })] },
    ]);
    expect((await leads(o)).map((l) => [l.name, l.status])).toEqual([['Fresh', 'NEW'], ['Kept', 'NEW'], ['Moved', 'CONTACTED']]);
  });

  it('applies rows sharing a key in file order, as a batch does: the first creates, the later ones update that lead', async () => {
    const o = await seedOrg(t.ctx);
    // 205 rows: the runner's batches of 100 and the chunks' transactions (of 3 here) both cut through the repeats.
    const rows = Array.from({ length: 200 }, (_, i) => `Lead ${i},erp-${i}`);
    const report = await upsert(o, csv(['name,externalId', 'Twice,erp-x', ...rows, 'Twice renamed,erp-x', 'Twice renamed,erp-x', 'Lead 7,erp-7', 'Lead 7 renamed,erp-7']), 'externalId');
    expect(report).toMatchObject({ rows: 205, imported: 205, failed: [], upsert: { created: 201, updated: 2, unchanged: 2 } });
    expect(outcomes(report).filter(([, outcome]) => outcome !== 'created')).toEqual([[203, 'updated'], [204, 'unchanged'], [205, 'unchanged'], [206, 'updated']]);
    const ids = new Map(report.upsert!.outcomes.map((r) => [r.line, r.id]));
    expect(ids.get(203)).toBe(ids.get(2));
    expect(ids.get(206)).toBe(ids.get(10));
    expect(await leadTotal(o)).toBe(201);
    const types = (await eventsOf(o)).map((e) => e.type);
    expect(types.filter((type) => type === 'lead.created')).toHaveLength(201);
    expect(types.filter((type) => type === 'lead.updated')).toHaveLength(2);
  });

  it('--all-or-nothing writes nothing when one row is invalid or refused, and every row when all are good', async () => {
    const o = await seedOrg(t.ctx);
    await call(t.app, 'POST', '/leads', { auth: o.auth, body: { name: 'Old name', externalId: 'erp-1' } });
    const events = (await eventsOf(o)).length;
    const good = ['name,email,externalId', 'New name,new@example.com,erp-1', 'Second,second@example.com,erp-2', 'Third,,erp-3', 'Fourth,,erp-4'];

    const invalid = await upsert(o, csv([...good, 'Fifth,not-an-email,erp-5']), 'externalId', { allOrNothing: true });
    expect(invalid).toMatchObject({ rows: 5, imported: 0, upsert: { created: 0, updated: 0, unchanged: 0, outcomes: [] } });
    expect(invalid.failed.map((f) => [f.line, f.errors[0]!.field])).toEqual([[6, 'email']]);
    const keyless = await upsert(o, csv([...good, 'Fifth,fifth@example.com,']), 'externalId', { allOrNothing: true });
    expect(keyless.failed.map((f) => [f.line, f.errors[0]!.code])).toEqual([[6, 'required']]);
    expect((await leads(o)).map((l) => l.name)).toEqual(['Old name']);
    expect(await eventsOf(o)).toHaveLength(events);

    const all = await upsert(o, csv(good), 'externalId', { allOrNothing: true });
    expect(all).toMatchObject({ rows: 4, imported: 4, failed: [], upsert: { created: 3, updated: 1, unchanged: 0 } });
    expect((await leads(o)).map((l) => l.name)).toEqual(['Fourth', 'New name', 'Second', 'Third']);
  });

  it('checks custom fields as an upsert item: a required one only when the row creates', async () => {
    const o = await seedOrg(t.ctx);
    expect((await call(t.app, 'PATCH', '/objects/leads', { auth: o.auth, body: { fields: [{ key: 'budget', label: 'Budget', type: 'number', required: true }] } })).status).toBe(200);
    await call(t.app, 'POST', '/leads', { auth: o.auth, body: { name: 'Ada', budget: 100, externalId: 'erp-1' } });
    const report = await upsert(o, csv(['name,budget,externalId', 'Ada Lovelace,,erp-1', 'Grace,,erp-2', 'Alan,250,erp-3', 'Cy,lots,erp-4']), 'externalId');
    expect(outcomes(report)).toEqual([[2, 'updated'], [4, 'created']]);
    expect(report.failed.map((f) => [f.line, f.errors.map((e) => [e.field, e.message])])).toEqual([[3, [['budget', 'is required']]], [5, [['budget', 'must be a number']]]]);
    expect((await leads(o)).map((l) => [l.name, l.budget])).toEqual([['Ada Lovelace', 100], ['Alan', 250]]);
  });

  it('upserts accounts, deals and records by external id through their services, with their events', async () => {
    const o = await seedOrg(t.ctx);
    const acme = (await call(t.app, 'POST', '/accounts', { auth: o.auth, body: { name: 'Acme', industry: 'Tools', externalId: 'acc-1' } })).body.data.account;
    const accounts = await upsert(o, csv(['name,industry,externalId', 'Acme,Anvils,acc-1', 'Globex,,acc-2']), 'externalId', { adapter: await accountImportAdapter(t.ctx, o.orgId) });
    expect(accounts).toMatchObject({ imported: 2, failed: [], upsert: { created: 1, updated: 1, unchanged: 0 } });
    expect((await call(t.app, 'GET', `/accounts/${acme.id}`, { auth: o.auth })).body.data.account.industry).toBe('Anvils');
    const updated = (await eventsOf(o)).filter((e) => e.type === 'account.updated');
    expect(updated.map((e) => [e.data.id, e.data.changes, e.data.actor.id])).toEqual([[acme.id, { before: { industry: 'Tools' }, after: { industry: 'Anvils' } }, 'import']]);

    const deals = await dealImportAdapter(t.ctx, o.orgId);
    const dealFile = ['name,amount,currency,stage,externalId', 'Big,1000.00,EUR,proposal,opp-1', 'Small,10.00,EUR,,opp-2'];
    await upsert(o, csv(dealFile), 'externalId', { adapter: deals });
    const moved = await upsert(o, csv([dealFile[0]!, 'Big,1000.00,EUR,won,opp-1', dealFile[2]!]), 'externalId', { adapter: deals });
    expect(outcomes(moved)).toEqual([[2, 'updated'], [3, 'unchanged']]);
    const stageEvents = (await eventsOf(o)).filter((e) => e.type === 'deal.stage_changed');
    expect(stageEvents.map((e) => [e.data.changes, e.data.actor.id])).toEqual([[{ before: { stage: 'proposal' }, after: { stage: 'won' } }, 'import']]);

    const object = await call(t.app, 'POST', '/objects', {
      auth: o.auth,
      body: { slug: 'visits', name: 'Visits', fields: [{ key: 'title', label: 'Title', type: 'text', required: true }, { key: 'rooms', label: 'Rooms', type: 'number' }] },
    });
    expect(object.status).toBe(201);
    const adapter = await recordImportAdapter(t.ctx, o.orgId, 'visits');
    const file = ['title,rooms,externalId', 'Flat,3,v-1', 'Office,2,v-2'];
    await upsert(o, csv(file), 'externalId', { adapter });
    const records = await upsert(o, csv([...file.slice(0, 2), 'Office,4,v-2', ',,v-3']), 'externalId', { adapter });
    expect(outcomes(records)).toEqual([[2, 'unchanged'], [3, 'updated']]);
    expect(records.failed.map((f) => [f.line, f.errors.map((e) => e.field)])).toEqual([[4, ['title']]]);
    const rows = (await call(t.app, 'GET', '/objects/visits/records', { auth: o.auth })).body.data.records;
    expect(rows.map((r: Record<string, unknown>) => [r.title, r.rooms]).sort()).toEqual([['Flat', 3], ['Office', 4]]);
    expect((await eventsOf(o)).filter((e) => e.type === 'record.updated').map((e) => e.data.changes)).toEqual([{ before: { rooms: 2 }, after: { rooms: 4 } }]);
  });
});

describe('crm import leads --upsert-by email', { timeout: IMPORT_TIMEOUT }, () => {
  it('updates the oldest live lead with the e-mail (the duplicate rule) and creates a lead for a new one', async () => {
    const o = await seedOrg(t.ctx);
    const oldest = (await call(t.app, 'POST', '/leads', { auth: o.auth, body: { name: 'Oldest', email: 'ada@example.com', company: 'Engines' } })).body.data.lead;
    const duplicate = (await call(t.app, 'POST', '/leads', { auth: o.auth, body: { name: 'Duplicate', email: 'ada@example.com' } })).body.data.lead;
    expect(duplicate.duplicateOf).toBe(oldest.id);

    const report = await upsert(o, csv(['name,email,title', 'Ada,ADA@Example.com,Countess', 'Grace,grace@example.com,Admiral', 'Nobody,,']), 'email');
    expect(report.upsert!.outcomes.map((r) => [r.line, r.outcome, r.id])).toEqual([[2, 'updated', oldest.id], [3, 'created', expect.any(String)]]);
    expect(report.failed).toEqual([{ line: 4, errors: [{ field: 'email', code: 'required', message: 'is required to upsert by email' }] }]);
    expect((await leads(o)).map((l) => [l.name, l.email, l.title, l.company])).toEqual([
      ['Ada', 'ada@example.com', 'Countess', 'Engines'],
      ['Duplicate', 'ada@example.com', null, null],
      ['Grace', 'grace@example.com', 'Admiral', null],
    ]);
    const updated = (await eventsOf(o)).filter((e) => e.type === 'lead.updated');
    expect(updated.map((e) => [e.data.id, e.data.changes])).toEqual([[oldest.id, { before: { name: 'Oldest', title: null }, after: { name: 'Ada', title: 'Countess' } }]]);
  });

  it('is refused for a resource that does not upsert by e-mail: one line, exit status 1, nothing read', async () => {
    const o = await seedOrg(t.ctx);
    const cli = await runCli(['import', 'accounts', csv(['name,email', 'Acme,info@acme.test']), '--org', o.orgId, '--upsert-by', 'email'], databaseEnv(t));
    expect(cli.code).toBe(1);
    expect(cli.stderr).toBe('error: accounts are upserted by externalId, not by email\n');
    expect(cli.stdout).toBe('');
    expect((await call(t.app, 'GET', '/accounts', { auth: o.auth })).body.data.accounts).toEqual([]);
  }, CHILD_TIMEOUT);
});
