import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call, expectError } from '../helpers/http.js';

let t: TestApp;
let a: Seeded;

beforeAll(async () => {
  t = await buildTestApp();
  a = await seedOrg(t.ctx);
});
afterAll(() => t.close());

/** Sends the value on create, then reads the deal back (GET), so the stored form is what is checked. */
async function roundTrip(expectedCloseDate: string): Promise<string> {
  const created = await call(t.app, 'POST', '/deals', { auth: a.auth, body: { name: 'Dated', expectedCloseDate } });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const read = await call(t.app, 'GET', `/deals/${created.body.data.deal.id}`, { auth: a.auth });
  expect(read.body.data.deal.expectedCloseDate).toBe(created.body.data.deal.expectedCloseDate);
  return read.body.data.deal.expectedCloseDate;
}

describe('expectedCloseDate (contract §4, date-only)', () => {
  it.each([
    ['2026-03-01', '2026-03-01T00:00:00.000Z'],
    ['2026-03-01T11:59:59.999Z', '2026-03-01T00:00:00.000Z'],
    ['2026-03-01T11:59:59Z', '2026-03-01T00:00:00.000Z'],
    ['2026-03-01T12:00:00.000Z', '2026-03-02T00:00:00.000Z'],
    ['2026-03-01T15:00:00Z', '2026-03-02T00:00:00.000Z'],
    ['2026-03-01T23:30:00-05:00', '2026-03-02T00:00:00.000Z'],
    ['2026-03-02T01:00:00+14:00', '2026-03-01T00:00:00.000Z'],
    ['2026-12-31T12:00:00Z', '2027-01-01T00:00:00.000Z'],
    ['2024-02-29', '2024-02-29T00:00:00.000Z'],
    ['2024-02-28T18:00:00Z', '2024-02-29T00:00:00.000Z'],
  ])('%s is kept as %s', async (sent, expected) => {
    expect(await roundTrip(sent)).toBe(expected);
  });

  it.each(['2025-02-29', '2026-02-30', '2026-13-01', '2026-04-31T10:00:00Z', '2026-03-01T24:00:00Z', '2026-03-01T10:00:00', '01/03/2026', 'tomorrow', ''])(
    'refuses %j with the field named',
    async (sent) => {
      const errors = expectError(await call(t.app, 'POST', '/deals', { auth: a.auth, body: { name: 'Bad date', expectedCloseDate: sent } }), 400, 'VALIDATION_FAILED');
      expect(errors).toEqual([{ field: 'expectedCloseDate', code: 'invalid_date', message: expect.any(String) }]);
    },
  );

  it('applies the same rules on patch and clears with null', async () => {
    const deal = (await call(t.app, 'POST', '/deals', { auth: a.auth, body: { name: 'Moving date' } })).body.data.deal;
    const patched = await call(t.app, 'PATCH', `/deals/${deal.id}`, { auth: a.auth, body: { expectedCloseDate: '2026-06-30T12:00:00.000Z' } });
    expect(patched.body.data.deal.expectedCloseDate).toBe('2026-07-01T00:00:00.000Z');
    expect(expectError(await call(t.app, 'PATCH', `/deals/${deal.id}`, { auth: a.auth, body: { expectedCloseDate: '2025-02-29' } }), 400, 'VALIDATION_FAILED')[0]!.field).toBe('expectedCloseDate');
    const cleared = await call(t.app, 'PATCH', `/deals/${deal.id}`, { auth: a.auth, body: { expectedCloseDate: null } });
    expect(cleared.body.data.deal.expectedCloseDate).toBeNull();
  });

  it('stores the calendar day itself', async () => {
    const deal = (await call(t.app, 'POST', '/deals', { auth: a.auth, body: { name: 'Stored', expectedCloseDate: '2026-03-01T23:30:00-05:00' } })).body.data.deal;
    const row = await t.ctx.database.db.selectFrom('deals').select('expected_close_date').where('id', '=', deal.id).executeTakeFirstOrThrow();
    expect(row.expected_close_date).toBe('2026-03-02');
  });
});
