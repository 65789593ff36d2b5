import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../../src/modules/events/outbox.store.js';
import type { TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';
import { addConsoleUser, fieldError, get, openConsole, signIn, submit, type ConsoleSession } from '../helpers/admin.js';

let t: TestApp;
let a: Seeded;
let s: ConsoleSession;
let accountId: string;

beforeAll(async () => {
  ({ t, a, s } = await openConsole({ name: 'Dana Deals' }));
  accountId = (await call(t.app, 'POST', '/accounts', { auth: a.auth, body: { name: 'Babbage & Co' } })).body.data.account.id;
});
afterAll(() => t?.close());

const idFrom = (location: string | undefined) => /\/admin\/data\/deals\/([0-9a-f]{24})/.exec(location ?? '')![1]!;
const names = (body: string) => [...body.matchAll(/<a (?:class="deal-card-name" )?href="\/admin\/data\/deals\/[0-9a-f]{24}">(.*?)<\/a>/g)].map((m) => m[1]);
const column = (body: string, label: string) => {
  const start = body.indexOf(`<span>${label}</span>`);
  return body.slice(start, body.indexOf('</section>', start));
};

describe('deal forms', () => {
  it('creates a deal from an account page, keeping the amount exact; the actor is the console user', async () => {
    const form = await get(t.app, `/admin/data/deals/new?accountId=${accountId}`, s.cookie);
    expect(form.body).toContain(`value="${accountId}"`);
    expect(form.body).toContain('Currently <strong>Babbage &amp; Co</strong>.');
    expect(form.body).toContain('<option value="EUR" label="Euro"></option>');
    const res = await submit(t.app, s, '/admin/data/deals', { name: 'Difference engine', stage: 'proposal', amount: '1234.50', currency: 'eur', accountId, leadId: '', ownerId: s.userId, expectedCloseDate: '2026-03-31' });
    expect(res.status, res.body).toBe(303);
    const id = idFrom(res.location);
    const deal = (await call(t.app, 'GET', `/deals/${id}`, { auth: a.auth })).body.data.deal;
    expect(deal).toMatchObject({ name: 'Difference engine', stage: 'proposal', amount: '1234.50', currency: 'EUR', accountId, leadId: null, ownerId: s.userId, expectedCloseDate: '2026-03-31T00:00:00.000Z' });
    const [event] = await listEvents(t.ctx.database.db, a.orgId, { objectId: id });
    expect(event!.data.actor).toEqual({ type: 'USER', id: s.userId, channel: 'UI' });
    const detail = await get(t.app, res.location!, s.cookie);
    expect(detail.body).toContain('1,234.50 EUR');
    expect(detail.body).toContain(`<a href="/admin/data/accounts/${accountId}">Babbage &amp; Co</a>`);
    expect(detail.body).toContain('<time datetime="2026-03-31">31 Mar 2026</time>');
    const edit = await get(t.app, `${res.location!.split('?')[0]}/edit`, s.cookie);
    expect(edit.body).toContain('value="2026-03-31"');
    expect(edit.body).toContain('value="1234.50"');
  });

  it('shows the API\'s amount, currency and date messages in place', async () => {
    const res = await submit(t.app, s, '/admin/data/deals', { name: 'Bad numbers', stage: 'proposal', amount: '12.34567', currency: '', expectedCloseDate: '2026-02-30' });
    expect(res.status).toBe(400);
    expect(fieldError(res.body, 'amount')).toBe('Error: Amount must have at most 4 decimals');
    expect(fieldError(res.body, 'expectedCloseDate')).toBe('Error: Expected close date is not a real calendar date');
    expect(res.body).toContain('value="12.34567"');
    const noCurrency = await submit(t.app, s, '/admin/data/deals', { name: 'No currency', stage: 'proposal', amount: '12.5' });
    expect(fieldError(noCurrency.body, 'currency')).toBe('Error: Currency is required when amount is set');
    const codes = await submit(t.app, s, '/admin/data/deals', { name: 'Bad codes', stage: 'proposal', amount: '-1', currency: 'ZZZ', accountId: 'f'.repeat(24) });
    expect(fieldError(codes.body, 'amount')).toBe('Error: Amount must be zero or more');
    expect(fieldError(codes.body, 'currency')).toBe('Error: Currency is not an ISO 4217 currency code');
    expect(fieldError(codes.body, 'accountId')).toBe('Error: Account is not an account of this organization');
  });

  it('edits a deal: a stage change and other changes are separate events', async () => {
    const id = idFrom((await submit(t.app, s, '/admin/data/deals', { name: 'Editable deal', stage: 'qualification' })).location);
    const ok = await submit(t.app, s, `/admin/data/deals/${id}`, { name: 'Edited deal', stage: 'won', amount: '10', currency: 'USD' });
    expect(ok.status).toBe(303);
    const types = (await listEvents(t.ctx.database.db, a.orgId, { objectId: id })).map((e) => e.type);
    expect(types).toEqual(['deal.created', 'deal.stage_changed', 'deal.updated']);
    const detail = await get(t.app, `/admin/data/deals/${id}`, s.cookie);
    expect(detail.body).toContain('Deal moved from Qualification to Won');
    expect(detail.body).toContain('<span class="badge badge--good">Won</span>');
  });
});

describe('deals table and board', () => {
  let org: Seeded;
  let viewer: ConsoleSession;
  let ownerId: string;
  beforeAll(async () => {
    org = await seedOrg(t.ctx);
    viewer = await signIn(t.app, await addConsoleUser(t.ctx, org.orgId, { name: 'Board Owner' }));
    ownerId = viewer.userId;
    for (let i = 1; i <= 14; i++) {
      await call(t.app, 'POST', '/deals', { auth: org.auth, body: { name: `Deal ${String(i).padStart(2, '0')}`, stage: i <= 12 ? 'proposal' : 'negotiation', ...(i % 2 ? { ownerId } : {}) } });
    }
  });

  it('filters the table by stage, owner and name, like the API', async () => {
    expect((await get(t.app, '/admin/data/deals', viewer.cookie)).body).toContain('Showing 1–14 of 14');
    expect(names((await get(t.app, '/admin/data/deals?stage=negotiation', viewer.cookie)).body)).toEqual(['Deal 14', 'Deal 13']);
    expect(names((await get(t.app, `/admin/data/deals?stage=negotiation&ownerId=${ownerId}`, viewer.cookie)).body)).toEqual(['Deal 13']);
    expect(names((await get(t.app, '/admin/data/deals?q=al+1', viewer.cookie)).body)).toHaveLength(5);
    const unknown = await get(t.app, '/admin/data/deals?stage=nowhere', viewer.cookie);
    expect(unknown.status).toBe(400);
    expect(fieldError(unknown.body, 'stage')).toBe('Error: Stage must be one of this organization&#39;s stages: qualification, proposal, negotiation, won, lost');
  });

  it('shows a board by stage, capped per column with a link to the rest', async () => {
    const board = await get(t.app, '/admin/data/deals/board', viewer.cookie);
    expect(board.status).toBe(200);
    const labels = [...board.body.matchAll(/<h2 id="col-\d+"><span>(.*?)<\/span>/g)].map((m) => m[1]);
    expect(labels).toEqual(['Qualification', 'Proposal', 'Negotiation', 'Won', 'Lost']);
    const proposal = column(board.body, 'Proposal');
    expect(names(proposal)).toHaveLength(10);
    expect(names(proposal)[0]).toBe('Deal 12');
    expect(proposal).toContain('12 deals');
    expect(proposal).toContain('<a href="/admin/data/deals?stage=proposal">2 more deals in Proposal</a>');
    expect(names(column(board.body, 'Negotiation'))).toEqual(['Deal 14', 'Deal 13']);
    const mine = await get(t.app, `/admin/data/deals/board?ownerId=${ownerId}`, viewer.cookie);
    expect(names(column(mine.body, 'Proposal'))).toHaveLength(6);
  });

  it('moves a card to another stage and returns to the board with its filters', async () => {
    const board = await get(t.app, `/admin/data/deals/board?ownerId=${ownerId}`, viewer.cookie);
    const id = /<a class="deal-card-name" href="\/admin\/data\/deals\/([0-9a-f]{24})">Deal 13<\/a>/.exec(board.body)![1]!;
    expect(board.body).toContain(`<label for="move-${id}" class="visually-hidden">Move Deal 13 to</label>`);
    const moved = await submit(t.app, viewer, `/admin/data/deals/${id}/stage`, { stage: 'won', back: `/admin/data/deals/board?ownerId=${ownerId}` });
    expect(moved.status).toBe(303);
    expect(moved.location).toBe(`/admin/data/deals/board?ownerId=${ownerId}&notice=moved&to=won`);
    const after = await get(t.app, moved.location!, viewer.cookie);
    expect(after.body).toContain('Deal moved to Won.');
    expect(names(column(after.body, 'Won'))).toEqual(['Deal 13']);
    const events = await listEvents(t.ctx.database.db, org.orgId, { objectId: id });
    expect(events.at(-1)).toMatchObject({ type: 'deal.stage_changed', data: { actor: { type: 'USER', id: viewer.userId, channel: 'UI' } } });
    const offsite = await submit(t.app, viewer, `/admin/data/deals/${id}/stage`, { stage: 'lost', back: 'https://evil.example/' });
    expect(offsite.location).toBe('/admin?notice=moved&to=lost');
    const refused = await submit(t.app, viewer, `/admin/data/deals/${id}/stage`, { stage: 'gone', back: '/admin/data/deals/board' });
    expect(refused.status).toBe(400);
    expect(refused.body).toContain(`id="move-${id}-error"`);
    expect(refused.body).toContain('Stage must be one of this organization&#39;s stages');
  });
});

describe('custom deal fields in the console', () => {
  it('the forms, the detail page and the table carry them: probability (number) and signed (boolean)', async () => {
    const org = await seedOrg(t.ctx);
    const viewer = await signIn(t.app, await addConsoleUser(t.ctx, org.orgId));
    const fields = [{ key: 'probability', label: 'Probability', type: 'number' }, { key: 'signed', label: 'Signed', type: 'boolean' }];
    expect((await call(t.app, 'PATCH', '/objects/deals', { auth: org.auth, body: { fields } })).status).toBe(200);
    const form = await get(t.app, '/admin/data/deals/new', viewer.cookie);
    expect(form.body).toMatch(/name="probability"/);
    expect(form.body).toMatch(/<select[^>]*name="signed"/);
    const bad = await submit(t.app, viewer, '/admin/data/deals', { name: 'Bad', probability: 'lots' });
    expect(bad.status).toBe(400);
    expect(fieldError(bad.body, 'probability')).toContain('Probability');
    const res = await submit(t.app, viewer, '/admin/data/deals', { name: 'Custom seats', probability: '0.75', signed: 'true' });
    expect(res.status, res.body).toBe(303);
    const id = idFrom(res.location);
    expect((await call(t.app, 'GET', `/deals/${id}`, { auth: org.auth })).body.data.deal).toMatchObject({ probability: 0.75, signed: true });
    const detail = await get(t.app, `/admin/data/deals/${id}`, viewer.cookie);
    expect(detail.body).toContain('<dt>Probability</dt><dd>0.75</dd>');
    expect(detail.body).toContain('<dt>Signed</dt><dd>Yes</dd>');
    expect((await get(t.app, `/admin/data/deals/${id}/edit`, viewer.cookie)).body).toContain('value="0.75"');
    const edited = await submit(t.app, viewer, `/admin/data/deals/${id}`, { name: 'Custom seats', probability: '', signed: 'true' });
    expect(edited.status, edited.body).toBe(303);
    expect((await call(t.app, 'GET', `/deals/${id}`, { auth: org.auth })).body.data.deal).toMatchObject({ probability: null, signed: true });
    const table = await get(t.app, '/admin/data/deals', viewer.cookie);
    expect(table.body).toContain('<th scope="col">Signed</th>');
    expect(table.body).toMatch(/<td>Yes<\/td>/);
  });
});
