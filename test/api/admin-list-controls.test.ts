import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';
import { addConsoleUser, get, signIn, type ConsoleSession } from '../helpers/admin.js';

/* The console's order and creation-date controls on the leads and accounts lists (the API's sort and createdAfter/Before). */

const clock = new ManualClock('2026-05-01T10:00:00.000Z');
let t: TestApp;
let a: Seeded;
let s: ConsoleSession;

beforeAll(async () => {
  t = await buildTestApp({ clock });
  a = await seedOrg(t.ctx);
  for (const [name, day] of [['Bravo', '2026-05-01'], ['Alpha', '2026-05-02'], ['Charlie', '2026-05-03']] as const) {
    clock.set(`${day}T10:00:00.000Z`);
    for (const path of ['/leads', '/accounts']) expect((await call(t.app, 'POST', path, { auth: a.auth, body: { name } })).status).toBe(201);
  }
  s = await signIn(t.app, await addConsoleUser(t.ctx, a.orgId, { name: 'Clara Console' }));
});
afterAll(() => t?.close());

const order = (body: string, names: string[]) => names.map((n) => body.indexOf(`>${n}<`));

describe.each(['leads', 'accounts'])('console %s list', (list) => {
  it('orders by the chosen sort and keeps it in the pager', async () => {
    const byName = await get(t.app, `/admin/data/${list}?sort=name`, s.cookie);
    expect(byName.status).toBe(200);
    const [alpha, bravo, charlie] = order(byName.body, ['Alpha', 'Bravo', 'Charlie']);
    expect(alpha).toBeGreaterThan(0);
    expect(alpha).toBeLessThan(bravo!);
    expect(bravo).toBeLessThan(charlie!);
    expect(byName.body).toContain('value="name" selected');
    const newest = await get(t.app, `/admin/data/${list}`, s.cookie);
    const [a2, , c2] = order(newest.body, ['Alpha', 'Bravo', 'Charlie']);
    expect(c2).toBeLessThan(a2!);
  });

  it('filters by creation day, both ends inclusive', async () => {
    const res = await get(t.app, `/admin/data/${list}?from=2026-05-02&to=2026-05-02`, s.cookie);
    expect(res.status).toBe(200);
    expect(res.body).toContain('>Alpha<');
    expect(res.body).not.toContain('>Bravo<');
    expect(res.body).not.toContain('>Charlie<');
  });

  it('answers 400 with the form for an unknown sort', async () => {
    const res = await get(t.app, `/admin/data/${list}?sort=seq`, s.cookie);
    expect(res.status).toBe(400);
  });
});
