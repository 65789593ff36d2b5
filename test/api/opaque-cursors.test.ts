import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { call, expectError } from '../helpers/http.js';
import { eventually } from '../helpers/receiver.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';

/**
 * What one organization can learn of another through the cursors the API hands it: none carries a number shared
 * across organizations (a row's `seq`, a transaction id), and each is sealed, so it can be neither read,
 * altered, made up nor used by another organization.
 */
let t: TestApp;
let a: Seeded;
let b: Seeded;
beforeAll(async () => {
  t = await buildTestApp();
  a = await seedOrg(t.ctx, { rateLimitPerMinute: 100_000 });
  b = await seedOrg(t.ctx, { rateLimitPerMinute: 100_000 });
});
afterAll(() => t.close());

const createLead = async (who: Seeded, name: string) => (await call(t.app, 'POST', '/leads', { auth: who.auth, body: { name } })).body.data.lead.id as string;
const decoded = (cursor: string) => Buffer.from(cursor, 'base64url').toString('latin1');
/** The cursor with one bit of byte `at` flipped (a negative `at` counts from the end). */
function flipped(cursor: string, at: number): string {
  const bytes = Buffer.from(cursor, 'base64url');
  bytes[(at + bytes.length) % bytes.length]! ^= 0x01;
  return bytes.toString('base64url');
}
const seqOf = async (table: string, id: string) => Number((await sql<{ seq: number }>`select seq from ${sql.table(table)} where id = ${id}`.execute(t.ctx.database.db)).rows[0]!.seq);

describe('list cursors', () => {
  let cursor: string;
  let lastSeq: number;
  beforeAll(async () => {
    await createLead(a, 'First');
    await createLead(b, 'Other organization');
    await createLead(a, 'Second');
    const page = (await call(t.app, 'GET', '/leads?limit=1', { auth: a.auth })).body.data;
    cursor = page.pagination.nextCursor;
    lastSeq = await seqOf('leads', page.leads[0].id);
  });

  it('hold nothing readable: not the sort, not the sort value, not the seq', async () => {
    const text = decoded(cursor);
    expect(() => JSON.parse(text)).toThrow();
    expect(text).not.toContain('createdAt');
    expect(text).not.toContain(`${lastSeq}]`);
    expect(text).not.toMatch(/\d{4}-\d{2}-\d{2}T/);
    const again = (await call(t.app, 'GET', '/leads?limit=1', { auth: a.auth })).body.data.pagination.nextCursor;
    expect(again).not.toBe(cursor);
    expect((await call(t.app, 'GET', `/leads?limit=1&after=${again}`, { auth: a.auth })).body.data.leads.map((l: { name: string }) => l.name)).toEqual(['First']);
  });

  it('work for the organization they were handed to, and are 400 for another one', async () => {
    expect((await call(t.app, 'GET', `/leads?limit=1&after=${cursor}`, { auth: a.auth })).body.data.leads.map((l: { name: string }) => l.name)).toEqual(['First']);
    expect(expectError(await call(t.app, 'GET', `/leads?limit=1&after=${cursor}`, { auth: b.auth }), 400, 'VALIDATION_FAILED')[0]).toMatchObject({ field: 'after', code: 'invalid_cursor' });
  });

  it('are 400 once altered by one bit anywhere', async () => {
    const length = Buffer.from(cursor, 'base64url').length;
    for (const at of [0, 1, 17, 33, length - 1]) {
      const res = await call(t.app, 'GET', `/leads?limit=1&after=${flipped(cursor, at)}`, { auth: a.auth });
      expect(expectError(res, 400, 'VALIDATION_FAILED')[0], `byte ${at}`).toMatchObject({ field: 'after', code: 'invalid_cursor' });
    }
  });

  it('made up in the form handed out before they were sealed: 400, telling to start the listing again', async () => {
    const unsealed = Buffer.from(JSON.stringify(['-createdAt', '2999-01-01T00:00:00.000Z', lastSeq])).toString('base64url');
    const [error] = expectError(await call(t.app, 'GET', `/leads?limit=1&after=${unsealed}`, { auth: a.auth }), 400, 'VALIDATION_FAILED');
    expect(error).toMatchObject({ field: 'after', code: 'invalid_cursor' });
    expect(error!.message).toContain('start the listing again without after');
  });

  it("a timeline's cursor is sealed the same way", async () => {
    const lead = await createLead(a, 'With history');
    for (const status of ['CONTACTED', 'QUALIFIED']) await call(t.app, 'PATCH', `/leads/${lead}`, { auth: a.auth, body: { status } });
    const next = (await call(t.app, 'GET', `/leads/${lead}/timeline?limit=1`, { auth: a.auth })).body.data.pagination.nextCursor as string;
    expect(decoded(next)).not.toContain('timeline');
    expect((await call(t.app, 'GET', `/leads/${lead}/timeline?limit=1&after=${next}`, { auth: a.auth })).status).toBe(200);
    expect(expectError(await call(t.app, 'GET', `/leads/${lead}/timeline?limit=1&after=${flipped(next, -1)}`, { auth: a.auth }), 400, 'VALIDATION_FAILED')[0]).toMatchObject({ field: 'after' });
  });
});

describe('the change feed cursor', () => {
  let cursor: string;
  beforeAll(async () => {
    await createLead(a, 'Fed');
    await createLead(a, 'Fed too');
    // On PostgreSQL an event shows once every older transaction has ended.
    cursor = await eventually(async () => {
      const page = (await call(t.app, 'GET', '/events?limit=1', { auth: a.auth })).body.data;
      expect(page.events).toHaveLength(1);
      return page.nextCursor as string;
    });
  });

  it('holds no transaction id or seq', async () => {
    const [first] = (await call(t.app, 'GET', '/events?limit=1', { auth: a.auth })).body.data.events;
    const seq = Number((await sql<{ seq: number }>`select seq from events where id = ${first.id}`.execute(t.ctx.database.db)).rows[0]!.seq);
    const text = decoded(cursor);
    expect(text).not.toMatch(/^\d+\.\d+$/);
    expect(text).not.toContain(`.${seq}`);
  });

  it('is 400 altered, for another organization, or made up with a transaction far in the future', async () => {
    expect((await call(t.app, 'GET', `/events?limit=1&after=${cursor}`, { auth: a.auth })).status).toBe(200);
    for (const bad of [flipped(cursor, 5), flipped(cursor, -1)]) {
      expect(expectError(await call(t.app, 'GET', `/events?after=${bad}`, { auth: a.auth }), 400, 'VALIDATION_FAILED')[0]).toMatchObject({ field: 'after', code: 'invalid_cursor' });
    }
    expect(expectError(await call(t.app, 'GET', `/events?after=${cursor}`, { auth: b.auth }), 400, 'VALIDATION_FAILED')[0]).toMatchObject({ field: 'after' });
    for (const forged of ['99999999999999999999.1', '0.1', '1.1']) {
      const res = await call(t.app, 'GET', `/events?after=${Buffer.from(forged).toString('base64url')}`, { auth: a.auth });
      expect(expectError(res, 400, 'VALIDATION_FAILED')[0], forged).toMatchObject({ field: 'after', code: 'invalid_cursor' });
    }
  });
});
