import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call, expectError } from '../helpers/http.js';
import { runCli } from '../helpers/cli.js';
import { databaseEnv } from '../helpers/processes.js';
import { createDeal } from '../../src/modules/deals/deals.service.js';
import { getDealStages, setDealStages } from '../../src/modules/deals/stages.service.js';
import { listEvents } from '../../src/modules/events/outbox.store.js';

let t: TestApp;
let a: Seeded;
let b: Seeded;

beforeAll(async () => {
  t = await buildTestApp();
  a = await seedOrg(t.ctx);
  b = await seedOrg(t.ctx);
});
afterAll(() => t.close());

const DEFAULTS = [
  { key: 'qualification', label: 'Qualification', kind: 'open' },
  { key: 'proposal', label: 'Proposal', kind: 'open' },
  { key: 'negotiation', label: 'Negotiation', kind: 'open' },
  { key: 'won', label: 'Won', kind: 'won' },
  { key: 'lost', label: 'Lost', kind: 'lost' },
];
const PIPELINE = [
  { key: 'discovery', label: 'Discovery', kind: 'open' },
  { key: 'demo', label: 'Demo', kind: 'open' },
  { key: 'signed', label: 'Signed', kind: 'won' },
  { key: 'churned', label: 'Churned', kind: 'lost' },
];

const set = (orgId: string, doc: unknown) => setDealStages(t.ctx, orgId, doc);

describe('GET /deal-stages', () => {
  it('answers the default stages until the organization sets its own', async () => {
    const res = await call(t.app, 'GET', '/deal-stages', { auth: a.auth });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: true, code: 'SUCCESS', data: { stages: DEFAULTS } });
  });
});

describe('setDealStages (crm stages set)', () => {
  it("replaces one organization's stages: default stage, allowed keys and the list follow", async () => {
    const o = await seedOrg(t.ctx);
    expect(await set(o.orgId, { stages: PIPELINE })).toEqual(PIPELINE);
    expect((await call(t.app, 'GET', '/deal-stages', { auth: o.auth })).body.data.stages).toEqual(PIPELINE);
    expect((await call(t.app, 'GET', '/deal-stages', { auth: b.auth })).body.data.stages).toEqual(DEFAULTS);

    const deal = (await call(t.app, 'POST', '/deals', { auth: o.auth, body: { name: 'Custom' } })).body.data.deal;
    expect(deal.stage).toBe('discovery');
    const refused = await call(t.app, 'POST', '/deals', { auth: o.auth, body: { name: 'Old key', stage: 'proposal' } });
    expect(refused.body.message).toContain('discovery, demo, signed, churned');
    expectError(refused, 400, 'VALIDATION_FAILED');
    expectError(await call(t.app, 'GET', '/deals?stage=proposal', { auth: o.auth }), 400, 'VALIDATION_FAILED');
    const moved = await call(t.app, 'PATCH', `/deals/${deal.id}`, { auth: o.auth, body: { stage: 'signed' } });
    expect(moved.body.data.deal.stage).toBe('signed');
    expect((await call(t.app, 'GET', '/deals?stage=signed', { auth: o.auth })).body.data.deals.map((d: { id: string }) => d.id)).toEqual([deal.id]);
    const events = await listEvents(t.ctx.database.db, o.orgId, { objectId: deal.id });
    expect(events[1]!.data.changes).toEqual({ before: { stage: 'discovery' }, after: { stage: 'signed' } });
  });

  it('validates the document: at least one stage, key format, unique keys, kinds, an open stage, no unknown fields', async () => {
    const o = await seedOrg(t.ctx);
    const fields = async (doc: unknown) => {
      try {
        await set(o.orgId, doc);
      } catch (err) {
        expect(err).toMatchObject({ code: 'VALIDATION_FAILED' });
        return (err as { errors: { field: string; code: string }[] }).errors.map((e) => `${e.field}:${e.code}`);
      }
      throw new Error('accepted');
    };
    expect(await fields({ stages: [] })).toEqual(['stages:too_short']);
    expect(await fields([])).toEqual(['stages:invalid_type']);
    expect(await fields({ stages: [{ key: 'Open', label: 'x', kind: 'open' }] })).toEqual(['stages.0.key:invalid_format']);
    expect(await fields({ stages: [{ key: '1st', label: 'x', kind: 'open' }] })).toEqual(['stages.0.key:invalid_format']);
    expect(await fields({ stages: [{ key: `a${'b'.repeat(50)}`, label: 'x', kind: 'open' }] })).toEqual(['stages.0.key:invalid_format']);
    expect(await fields({ stages: [{ key: 'a', label: 'A', kind: 'open' }, { key: 'a', label: 'B', kind: 'won' }] })).toEqual(['stages.1.key:duplicate']);
    expect(await fields({ stages: [{ key: 'won', label: 'Won', kind: 'won' }, { key: 'lost', label: 'Lost', kind: 'lost' }] })).toEqual(['stages:no_open_stage']);
    expect(await fields({ stages: [{ key: 'a', label: '', kind: 'pending' }] })).toEqual(['stages.0.label:too_short', 'stages.0.kind:invalid_value']);
    expect(await fields({ stages: [{ key: 'a', label: 'A', kind: 'open', color: 'red' }] })).toEqual(['stages.0.color:unknown_field']);
    expect(await fields({ stages: PIPELINE, extra: 1 })).toEqual(['extra:unknown_field']);
    expect(await getDealStages(t.ctx.database.db, o.orgId)).toEqual(DEFAULTS);
  });

  it('accepts a single open stage and allows reordering and relabelling stages in use', async () => {
    const o = await seedOrg(t.ctx);
    await call(t.app, 'POST', '/deals', { auth: o.auth, body: { name: 'In proposal', stage: 'proposal' } });
    const reordered = [DEFAULTS[1]!, { ...DEFAULTS[0]!, label: 'Qualifying' }, ...DEFAULTS.slice(2)];
    expect(await set(o.orgId, { stages: reordered })).toEqual(reordered);
    expect((await call(t.app, 'POST', '/deals', { auth: o.auth, body: { name: 'Default now proposal' } })).body.data.deal.stage).toBe('proposal');
    const single = await seedOrg(t.ctx);
    expect(await set(single.orgId, { stages: [{ key: 'open', label: 'Open', kind: 'open' }] })).toHaveLength(1);
  });

  it('refuses to remove stages still used by deals, naming each stage and its count', async () => {
    const o = await seedOrg(t.ctx);
    for (const stage of ['proposal', 'proposal', 'proposal', 'won']) await call(t.app, 'POST', '/deals', { auth: o.auth, body: { name: 'Busy', stage } });
    const onlyOpen = [{ key: 'qualification', label: 'Qualification', kind: 'open' }];
    const err = await set(o.orgId, { stages: onlyOpen }).then(() => null, (e: unknown) => e);
    expect(err).toMatchObject({ code: 'CONFLICT' });
    const { message, errors } = err as { message: string; errors: { field: string; code: string; message: string }[] };
    expect(message).toContain('proposal (3 deals)');
    expect(message).toContain('won (1 deal)');
    expect(errors.map((e) => e.code)).toEqual(['in_use', 'in_use']);
    expect(await getDealStages(t.ctx.database.db, o.orgId)).toEqual(DEFAULTS);
    // Unused stages (negotiation, lost) can go once the used ones are kept.
    const kept = [DEFAULTS[0]!, DEFAULTS[1]!, DEFAULTS[3]!];
    expect(await set(o.orgId, { stages: kept })).toEqual(kept);
  });

  it('only counts deals of the same organization', async () => {
    const o = await seedOrg(t.ctx);
    await call(t.app, 'POST', '/deals', { auth: a.auth, body: { name: 'Elsewhere', stage: 'negotiation' } });
    expect(await set(o.orgId, { stages: [DEFAULTS[0]!] })).toEqual([DEFAULTS[0]]);
  });

  it('waits for a deal being written into a stage it removes, then refuses', async () => {
    const o = await seedOrg(t.ctx);
    const caller = { organizationId: o.orgId, actor: { type: 'API_KEY' as const, id: o.keyId, channel: 'API' as const } };
    let inserted!: () => void;
    let commit!: () => void;
    const insertedSignal = new Promise<void>((r) => (inserted = r));
    const commitSignal = new Promise<void>((r) => (commit = r));
    const writing = t.ctx.database.db.transaction().execute(async (trx) => {
      await createDeal(t.ctx, trx, caller, { name: 'In flight', stage: 'negotiation' });
      inserted();
      await commitSignal;
    });
    await insertedSignal;
    const setting = set(o.orgId, { stages: DEFAULTS.filter((s) => s.key !== 'negotiation') }).then(() => null, (e: unknown) => e);
    await new Promise((r) => setTimeout(r, 100));
    commit();
    await writing;
    expect(await setting).toMatchObject({ code: 'CONFLICT', message: expect.stringContaining('negotiation (1 deal)') });
  });

  it('refuses an unknown organization', async () => {
    await expect(set('0000000000000000deadbeef', { stages: PIPELINE })).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});

describe('crm stages set (process)', () => {
  it('sets the stages from a file and prints them with --json; errors print the envelope and exit 1', async () => {
    const o = await seedOrg(t.ctx);
    const dir = mkdtempSync(join(tmpdir(), 'crm-stages-'));
    try {
      const file = join(dir, 'stages.json');
      writeFileSync(file, JSON.stringify({ stages: PIPELINE }));
      const run = (args: string[]) => runCli(args, { ...databaseEnv(t), LOG_LEVEL: 'silent' });
      const ok = await run(['stages', 'set', '--org', o.orgId, '--file', file, '--json']);
      expect(ok.code, ok.stderr).toBe(0);
      expect(JSON.parse(ok.stdout)).toEqual({ stages: PIPELINE });
      expect((await call(t.app, 'GET', '/deal-stages', { auth: o.auth })).body.data.stages).toEqual(PIPELINE);

      const deal = (await call(t.app, 'POST', '/deals', { auth: o.auth, body: { name: 'In demo', stage: 'demo' } })).body.data.deal;
      const withoutDemo = PIPELINE.filter((st) => st.key !== 'demo');
      writeFileSync(file, JSON.stringify({ stages: withoutDemo }));
      const inUse = await run(['stages', 'set', '--org', o.orgId, '--file', file, '--json']);
      expect(inUse.code).toBe(1);
      expect(JSON.parse(inUse.stdout)).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ field: 'moveTo.demo', code: 'in_use' }] });
      writeFileSync(file, JSON.stringify({ stages: withoutDemo, moveTo: { demo: 'discovery' } }));
      const moved = await run(['stages', 'set', '--org', o.orgId, '--file', file, '--json']);
      expect(moved.code, moved.stderr).toBe(0);
      expect((await call(t.app, 'GET', `/deals/${deal.id}`, { auth: o.auth })).body.data.deal.stage).toBe('discovery');
      const events = await listEvents(t.ctx.database.db, o.orgId, { objectId: deal.id });
      expect(events.at(-1)).toMatchObject({ type: 'deal.stage_changed', data: { actor: { type: 'SYSTEM', id: 'cli', channel: 'API' } } });

      writeFileSync(file, JSON.stringify({ stages: [{ key: 'won', label: 'Won', kind: 'won' }] }));
      const bad = await run(['stages', 'set', '--org', o.orgId, '--file', file, '--json']);
      expect(bad.code).toBe(1);
      expect(JSON.parse(bad.stdout)).toMatchObject({ status: false, code: 'VALIDATION_FAILED', errors: [{ field: 'stages', code: 'no_open_stage' }] });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
