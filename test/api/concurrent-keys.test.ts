import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Res } from '../helpers/http.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { buildTestApp, dialect, type TestApp } from '../helpers/test-app.js';

/**
 * Writers of one new key at the same moment: creates of one new e-mail or phone (duplicate detection, contract
 * §4), upserts of one new e-mail or external id (§8), a PATCH or a restore meeting them. The requests of a
 * round are all in flight together, sent to two API instances on one database (PostgreSQL; SQLite's instances
 * in one process would sleep in each other's busy handler, its threads share a write lock instead:
 * http-threads.test.ts); many rounds, since which one gets ahead is left to chance. The outcome must be one of
 * the requests' one-by-one outcomes: on PostgreSQL the writers lock their keys first (db/key-locks.ts), on
 * SQLite they write one at a time.
 */
let one: TestApp;
let two: TestApp;
let s: Seeded;

beforeAll(async () => {
  one = await buildTestApp();
  two = dialect === 'postgres' ? await buildTestApp({ sameDatabaseAs: one }) : one;
  s = await seedOrg(one.ctx, { rateLimitPerMinute: 1_000_000 });
  const object = await call(one.app, 'POST', '/objects', { auth: s.auth, body: { slug: 'tickets', name: 'Ticket', fields: [{ key: 'title', label: 'Title', type: 'text', required: true }] } });
  expect(object.status, JSON.stringify(object.body)).toBe(201);
});
afterAll(async () => {
  if (two !== one) await two.close();
  await one.close();
});

const ROUNDS = 12;

/** Request `i` of a round, to one instance or the other. */
const send = (i: number, method: 'POST' | 'PATCH' | 'GET' | 'DELETE', path: string, body?: unknown) => call(i % 2 === 0 ? one.app : two.app, method, path, { auth: s.auth, body });

/** `n` requests in flight together. */
const together = (n: number, request: (i: number) => Promise<Res>) => Promise.all(Array.from({ length: n }, (_, i) => request(i)));

const ok = (res: Res) => {
  expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  return res;
};

/** The one result of a batch of one item. */
const itemOf = (res: Res) => ok(res).body.data.results[0] as { status: number; error?: { code: string } } & Record<string, { id: string } | undefined>;

describe('creates of one new contact at once', () => {
  it.each([
    ['e-mail', (round: number) => ({ email: `Same-${round}@race.example` })],
    ['phone', (round: number) => ({ phoneNumber: `+1415555${3000 + round}` })],
  ])('by %s: one lead has no duplicateOf, every other one names it', async (_, contact) => {
    for (let round = 0; round < ROUNDS; round++) {
      const leads = (await together(8, (i) => send(i, 'POST', '/leads', { name: `Racer ${round}.${i}`, ...contact(round) }))).map((r) => ok(r).body.data.lead);
      const first = leads.filter((l) => l.duplicateOf === null);
      expect(first, `round ${round}`).toHaveLength(1);
      expect(leads.filter((l) => l !== first[0]).map((l) => l.duplicateOf)).toEqual(Array(7).fill(first[0].id));
    }
  });
});

describe('upserts of one new key at once', () => {
  it('by e-mail: one creates the lead, the others update it', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const email = `upsert-${round}@race.example`;
      const items = (await together(8, (i) => send(i, 'POST', '/leads/batch', { upsertBy: 'email', items: [{ name: `Upsert ${i}`, email }] }))).map(itemOf);
      expect(items.map((r) => r.status).sort(), `round ${round}`).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
      expect(new Set(items.map((r) => r.lead!.id)).size).toBe(1);
      expect(ok(await send(0, 'GET', `/leads?q=${email}`)).body.data.leads).toHaveLength(1);
    }
  });

  const kinds = [
    { path: '/leads', key: 'lead', body: { name: 'Ada' } },
    { path: '/accounts', key: 'account', body: { name: 'Acme' } },
    { path: '/deals', key: 'deal', body: { name: 'Big deal' } },
    { path: '/objects/tickets/records', key: 'record', body: { title: 'Broken' } },
  ];

  it.each(kinds)('by external id on $path: one creates it, the others update it (never 409)', async ({ path, key, body }) => {
    for (let round = 0; round < ROUNDS; round++) {
      const externalId = `${key}-upsert-${round}`;
      const items = (await together(6, (i) => send(i, 'POST', `${path}/batch`, { upsertBy: 'externalId', items: [{ ...body, externalId }] }))).map(itemOf);
      expect(items.map((r) => r.status).sort(), `round ${round}: ${JSON.stringify(items.map((r) => r.error))}`).toEqual([200, 200, 200, 200, 200, 201]);
      expect(new Set(items.map((r) => r[key]!.id)).size).toBe(1);
    }
  });

  it.each(kinds)('by external id on $path, while a PATCH gives it to an item: the upsert updates that item or creates before it (never 409)', async ({ path, key, body }) => {
    for (let round = 0; round < ROUNDS; round++) {
      const externalId = `${key}-patched-${round}`;
      const item = ok(await send(0, 'POST', path, body)).body.data[key];
      const [patched, upserted] = await Promise.all([
        send(0, 'PATCH', `${path}/${item.id}`, { externalId }),
        send(1, 'POST', `${path}/batch`, { upsertBy: 'externalId', items: [{ ...body, externalId }] }),
      ]);
      const result = itemOf(upserted);
      if (result.status === 200) {
        expect(result[key]!.id, `round ${round}`).toBe(item.id);
        expect(patched.status).toBe(200);
      } else {
        expect(result.status, `round ${round}: ${JSON.stringify(result.error)}`).toBe(201);
        expect(patched.status).toBe(409);
      }
    }
  });
});

describe('a restore and a create of one contact at once', () => {
  it('one of the two leads has no duplicateOf, the other names it', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const email = `restored-${round}@race.example`;
      const trashed = ok(await send(0, 'POST', '/leads', { name: 'Trashed', email })).body.data.lead;
      ok(await send(0, 'DELETE', `/leads/${trashed.id}`));
      const pair = (await Promise.all([send(0, 'POST', `/leads/${trashed.id}/restore`), send(1, 'POST', '/leads', { name: 'New', email })])).map((r) => ok(r).body.data.lead);
      const first = pair.filter((l) => l.duplicateOf === null);
      expect(first, `round ${round}`).toHaveLength(1);
      expect(pair.find((l) => l !== first[0]).duplicateOf).toBe(first[0].id);
    }
  });
});
