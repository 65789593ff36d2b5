import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type DealStage } from '@crm/sdk';
import { listEvents } from '../../src/modules/events/outbox.store.js';
import { DEFAULT_DEAL_STAGES } from '../../src/modules/deals/stages.service.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { addKey, seedOrg, type Seeded } from '../helpers/seed.js';
import { call, expectError } from '../helpers/http.js';
import { listen } from '../helpers/mcp.js';

/** PUT /deal-stages (contract §9): the console's stage rules through the API, with moveTo for stages in use. */
let t: TestApp;

beforeAll(async () => {
  t = await buildTestApp();
});
afterAll(() => t.close());

// The defaults themselves are pinned by deal-stages.test.ts.
const DEFAULTS = DEFAULT_DEAL_STAGES;
const LEAN = [
  { key: 'discovery', label: 'Discovery', kind: 'open' },
  { key: 'won', label: 'Won', kind: 'won' },
  { key: 'lost', label: 'Lost', kind: 'lost' },
] as const satisfies readonly DealStage[];

const put = (o: Seeded, body: unknown) => call(t.app, 'PUT', '/deal-stages', { auth: o.auth, body });
const stagesOf = async (o: Seeded) => (await call(t.app, 'GET', '/deal-stages', { auth: o.auth })).body.data.stages;
async function deal(o: Seeded, stage: string): Promise<string> {
  const res = await call(t.app, 'POST', '/deals', { auth: o.auth, body: { name: `In ${stage}`, stage } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.deal.id;
}
const stageOf = async (o: Seeded, id: string) => (await call(t.app, 'GET', `/deals/${id}`, { auth: o.auth })).body.data.deal.stage;

describe('PUT /deal-stages', () => {
  it('replaces the stages of the organization only; GET and new deals follow', async () => {
    const [o, other] = [await seedOrg(t.ctx), await seedOrg(t.ctx)];
    const res = await put(o, { stages: LEAN });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.data.stages).toEqual(LEAN);
    expect(await stagesOf(o)).toEqual(LEAN);
    expect(await stagesOf(other)).toEqual(DEFAULTS);
    expect((await call(t.app, 'POST', '/deals', { auth: o.auth, body: { name: 'New' } })).body.data.deal.stage).toBe('discovery');
  });

  it('refuses to drop a stage deals are in without moveTo, naming it; nothing changes', async () => {
    const o = await seedOrg(t.ctx);
    const id = await deal(o, 'proposal');
    await deal(o, 'proposal');
    const errors = expectError(await put(o, { stages: LEAN }), 400, 'VALIDATION_FAILED');
    expect(errors).toEqual([{ field: 'moveTo.proposal', code: 'in_use', message: expect.stringContaining('stage proposal is still used by 2 deals') }]);
    const partly = expectError(await put(o, { stages: LEAN, moveTo: { qualification: 'discovery' } }), 400, 'VALIDATION_FAILED');
    expect(partly.map((e) => e.field)).toEqual(['moveTo.proposal']);
    expect(await stagesOf(o)).toEqual(DEFAULTS);
    expect(await stageOf(o, id)).toBe('proposal');
  });

  it('with moveTo, moves the deals of each removed stage, trashed ones too, in the same transaction, each with deal.stage_changed', async () => {
    const o = await seedOrg(t.ctx);
    const [p1, p2, n1, w1] = [await deal(o, 'proposal'), await deal(o, 'proposal'), await deal(o, 'negotiation'), await deal(o, 'won')];
    const trashed = await deal(o, 'proposal');
    expect((await call(t.app, 'DELETE', `/deals/${trashed}`, { auth: o.auth })).status).toBe(200);
    const res = await put(o, { stages: LEAN, moveTo: { proposal: 'discovery', negotiation: 'won' } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(await Promise.all([p1, p2, n1, w1].map((id) => stageOf(o, id)))).toEqual(['discovery', 'discovery', 'won', 'won']);
    const moved = await listEvents(t.ctx.database.db, o.orgId, { objectId: p1 });
    expect(moved.map((e) => e.type)).toEqual(['deal.created', 'deal.stage_changed']);
    expect(moved[1]!.data).toMatchObject({ changes: { before: { stage: 'proposal' }, after: { stage: 'discovery' } }, actor: { type: 'API_KEY', id: o.keyId, channel: 'API' } });
    expect((await listEvents(t.ctx.database.db, o.orgId, { objectId: w1 })).map((e) => e.type)).toEqual(['deal.created']);
    expect((await listEvents(t.ctx.database.db, o.orgId, { objectId: trashed })).map((e) => e.type)).toEqual(['deal.created', 'deal.deleted', 'deal.stage_changed']);
    // Restored, it lands in a stage that exists.
    expect((await call(t.app, 'POST', `/deals/${trashed}/restore`, { auth: o.auth })).status).toBe(200);
    expect(await stageOf(o, trashed)).toBe('discovery');
  });

  it('counts trashed deals as holding a stage: dropping it without moveTo is refused', async () => {
    const o = await seedOrg(t.ctx);
    const trashed = await deal(o, 'proposal');
    expect((await call(t.app, 'DELETE', `/deals/${trashed}`, { auth: o.auth })).status).toBe(200);
    const errors = expectError(await put(o, { stages: LEAN, moveTo: { qualification: 'discovery', negotiation: 'discovery' } }), 400, 'VALIDATION_FAILED');
    expect(errors).toEqual([{ field: 'moveTo.proposal', code: 'in_use', message: expect.stringContaining('stage proposal is still used by 1 deal') }]);
    expect(await stagesOf(o)).toEqual(DEFAULTS);
  });

  it('refuses a moveTo from a stage that stays or to one that goes, an unknown field, and more than 50 stages', async () => {
    const o = await seedOrg(t.ctx);
    await deal(o, 'proposal');
    const errors = expectError(await put(o, { stages: LEAN, moveTo: { proposal: 'negotiation', won: 'discovery' } }), 400, 'VALIDATION_FAILED');
    expect(errors.map((e) => [e.field, e.code])).toEqual([['moveTo.proposal', 'invalid_value'], ['moveTo.won', 'invalid_value']]);
    expectError(await put(o, { stages: LEAN, moveTo: { proposal: 'discovery' }, dryRun: true }), 400, 'VALIDATION_FAILED');
    const many = Array.from({ length: 51 }, (_, i) => ({ key: `s${i}`, label: `S${i}`, kind: 'open' }));
    expect(expectError(await put(o, { stages: many }), 400, 'VALIDATION_FAILED')[0]!.field).toBe('stages');
    const dup = expectError(await put(o, { stages: [...LEAN, LEAN[0]] }), 400, 'VALIDATION_FAILED');
    expect(dup.map((e) => e.code)).toContain('duplicate');
    expect(await stagesOf(o)).toEqual(DEFAULTS);
  });

  it('needs objects:admin (deals:write is not enough)', async () => {
    const o = await seedOrg(t.ctx);
    const writer = await addKey(t.ctx, o.orgId, ['deals:read', 'deals:write']);
    expectError(await call(t.app, 'PUT', '/deal-stages', { auth: writer.auth, body: { stages: LEAN } }), 403, 'INSUFFICIENT_SCOPE');
  });

  it('the SDK reads and replaces the stages', async () => {
    const o = await seedOrg(t.ctx);
    const id = await deal(o, 'negotiation');
    const crm = createClient({ baseUrl: await listen(t), apiKey: o.key });
    expect(await crm.dealStages.get()).toEqual(DEFAULTS);
    expect(await crm.dealStages.put([...LEAN], { moveTo: { negotiation: 'discovery' } })).toEqual(LEAN);
    expect(await stageOf(o, id)).toBe('discovery');
  });
});
