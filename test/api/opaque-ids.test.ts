import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';

/**
 * What one organization can learn of another through the ids the API hands it: after their time (or process)
 * prefix, ids, event ids and request ids are random, not a counter that steps by what others made in between.
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

describe('ids', () => {
  /** Everything after the seconds and the millisecond: random bits (the last 52 as 13 hex digits). */
  const tail = (id: string) => BigInt(`0x${id.slice(11)}`);
  const apart = (x: bigint, y: bigint) => (x > y ? x - y : y - x);

  it('made one after another reveal no counter, whoever else creates in between', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      ids.push(await createLead(a, `Counted ${i}`));
      if (i % 2) await createLead(b, 'Between');
    }
    // A counter (the ObjectId layout's last 3 bytes) steps by the ids made in between; random tails lie ~2^51 apart.
    for (let i = 1; i < ids.length; i++) expect(apart(tail(ids[i]!), tail(ids[i - 1]!)), `${ids[i - 1]} → ${ids[i]}`).toBeGreaterThan(2n ** 32n);
    const events = (await call(t.app, 'GET', `/leads/${ids[0]}/timeline`, { auth: a.auth })).body.data.timeline;
    expect(events[0].event.id).toMatch(/^evt_[0-9a-f]{24}$/);
    expect(apart(tail(events[0].event.id.slice(4)), tail(ids[0]!))).toBeGreaterThan(2n ** 32n);
  });

  it('request ids: after the process prefix, random rather than a sequence', async () => {
    const requestIds: string[] = [];
    for (let i = 0; i < 4; i++) requestIds.push(String((await call(t.app, 'GET', '/me', { auth: a.auth })).headers['x-request-id']));
    const suffixes = requestIds.map((r) => r.slice('req_'.length + 12));
    expect(new Set(requestIds.map((r) => r.slice(0, 16))).size).toBe(1);
    for (const s of suffixes) expect(s).toMatch(/^[0-9a-f]{16}$/);
    for (let i = 1; i < suffixes.length; i++) expect(apart(BigInt(`0x${suffixes[i]}`), BigInt(`0x${suffixes[i - 1]}`))).toBeGreaterThan(2n ** 32n);
  });
});
