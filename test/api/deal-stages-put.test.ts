import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, CrmApiError, etagOf, type DealStage } from '@crm/sdk';
import { listEvents } from '../../src/modules/events/outbox.store.js';
import { DEFAULT_DEAL_STAGES } from '../../src/modules/deals/stages.service.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { addKey, seedOrg, type Seeded } from '../helpers/seed.js';
import { call, expectError, type Res } from '../helpers/http.js';
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

const put = (o: Seeded, body: unknown, ifMatch?: string) => call(t.app, 'PUT', '/deal-stages', { auth: o.auth, body, headers: ifMatch === undefined ? {} : { 'if-match': ifMatch } });
const read = (o: Seeded, headers: Record<string, string> = {}) => call(t.app, 'GET', '/deal-stages', { auth: o.auth, headers });
const stagesOf = async (o: Seeded) => (await read(o)).body.data.stages;
const etag = (res: Res) => res.headers.etag as string;
const SIGNED = [{ key: 'discovery', label: 'Discovery', kind: 'open' }, { key: 'signed', label: 'Signed', kind: 'won' }] as const satisfies readonly DealStage[];
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
    // The removed stage is named by the label it had.
    expect(moved[1]!.data.description).toBe('Deal moved from Proposal to Discovery');
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

/** The stage list is one resource for optimistic concurrency (contract §8): two admins or a sync job can't overwrite each other. */
describe('ETag and If-Match on the stage list', () => {
  it('GET and PUT answer with the tag of the list they return; If-None-Match with it (weakly, in a list, or *) is 304', async () => {
    const o = await seedOrg(t.ctx);
    const first = await read(o);
    expect(etag(first)).toBe(t.ctx.entityTagger.tagOf(first.body.data.stages));
    for (const header of [etag(first), `W/${etag(first)}`, `"other", ${etag(first)}`, '*']) {
      const res = await read(o, { 'if-none-match': header });
      expect(res.status, header).toBe(304);
      expect(res.body).toBe('');
      expect(etag(res)).toBe(etag(first));
    }
    const replaced = await put(o, { stages: LEAN });
    expect(etag(replaced)).toBe(t.ctx.entityTagger.tagOf(LEAN));
    expect(etag(replaced)).not.toBe(etag(first));
    const changed = await read(o, { 'if-none-match': etag(first) });
    expect(changed.status).toBe(200);
    expect(etag(changed)).toBe(etag(replaced));
  });

  it('a PUT with a stale or weak tag is 412 with the current list and its tag, nothing written; the current tag or * writes', async () => {
    const o = await seedOrg(t.ctx);
    const stale = etag(await read(o));
    await deal(o, 'proposal');
    const theirs = await put(o, { stages: [...DEFAULTS, { key: 'onboarding', label: 'Onboarding', kind: 'open' }] }, stale);
    expect(theirs.status, JSON.stringify(theirs.body)).toBe(200);
    // Checked before the body's moveTo rules: dropping proposal without moveTo would also be a 400.
    const refused = await put(o, { stages: LEAN }, stale);
    expectError(refused, 412, 'PRECONDITION_FAILED');
    const current = await read(o);
    expect(refused.body.data).toEqual(current.body.data);
    expect(etag(refused)).toBe(etag(current));
    expect(etag(current)).toBe(etag(theirs));
    expectError(await put(o, { stages: LEAN, moveTo: { proposal: 'discovery' } }, `W/${etag(current)}`), 412, 'PRECONDITION_FAILED');
    expect(await stagesOf(o)).toEqual(theirs.body.data.stages);
    const mine = await put(o, { stages: LEAN, moveTo: { proposal: 'discovery' } }, `"other", ${etag(current)}`);
    expect(mine.status, JSON.stringify(mine.body)).toBe(200);
    expect(mine.body.data.stages).toEqual(LEAN);
    expect((await put(o, { stages: SIGNED }, '*')).status).toBe(200);
  });

  it('two writers racing with the same tag: exactly one list is written, the other gets 412 with it', async () => {
    const o = await seedOrg(t.ctx);
    const id = await deal(o, 'proposal');
    const tag = etag(await read(o));
    const answers = await Promise.all([
      put(o, { stages: LEAN, moveTo: { proposal: 'discovery' } }, tag),
      put(o, { stages: SIGNED, moveTo: { proposal: 'discovery' } }, tag),
    ]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 412]);
    const winner = answers.find((a) => a.status === 200)!;
    const loser = answers.find((a) => a.status === 412)!;
    expect(loser.body.data.stages).toEqual(winner.body.data.stages);
    expect(etag(loser)).toBe(etag(winner));
    expect(await stagesOf(o)).toEqual(winner.body.data.stages);
    expect(await stageOf(o, id)).toBe('discovery');
    expect((await listEvents(t.ctx.database.db, o.orgId, { objectId: id })).map((e) => e.type)).toEqual(['deal.created', 'deal.stage_changed']);
  });

  it('the SDK tags the list it reads and sends it back as ifMatch', async () => {
    const o = await seedOrg(t.ctx);
    const crm = createClient({ baseUrl: await listen(t), apiKey: o.key });
    const mine = await crm.dealStages.get();
    expect(etagOf(mine)).toBe(t.ctx.entityTagger.tagOf(DEFAULTS));
    const theirs = await crm.dealStages.put([...DEFAULTS, { key: 'onboarding', label: 'Onboarding', kind: 'open' }], {}, { ifMatch: etagOf(mine) });
    const refused = await crm.dealStages.put([...LEAN], {}, { ifMatch: etagOf(mine) }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(CrmApiError);
    expect(refused).toMatchObject({ status: 412, code: 'PRECONDITION_FAILED' });
    const current = (refused as CrmApiError).data!.stages as DealStage[];
    expect(current).toEqual(theirs);
    expect(etagOf(current)).toBe(etagOf(theirs));
    expect(await crm.dealStages.put([...LEAN], {}, { ifMatch: etagOf(current) })).toEqual(LEAN);
  });
});
