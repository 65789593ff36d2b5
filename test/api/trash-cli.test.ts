import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';
import { crm, crmJson, databaseEnv, killSpawned, testKey } from '../helpers/processes.js';

/** `crm trash purge [--org O]`: the expired-trash purge run by hand, against the same database. */
let t: TestApp;
let env: Record<string, string>;
// Deletions made "years ago" by this app's clock are long expired for the CLI, which runs on real time.
const clock = new ManualClock('2020-01-01T00:00:00.000Z');

beforeAll(async () => {
  t = await buildTestApp({ clock, env: { ENCRYPTION_KEY: testKey() } });
  env = { ...databaseEnv(t), LOG_LEVEL: 'silent' };
});
afterAll(async () => {
  killSpawned();
  await t.close();
});

const run = (args: string[]) => crmJson(args, env);

async function trashedLead(org: Seeded): Promise<string> {
  const id = (await call(t.app, 'POST', '/leads', { auth: org.auth, body: { name: 'Old Trash' } })).body.data.lead.id as string;
  expect((await call(t.app, 'DELETE', `/leads/${id}`, { auth: org.auth })).status).toBe(200);
  return id;
}
const inTrash = async (org: Seeded) => (await call(t.app, 'GET', '/leads?deleted=true', { auth: org.auth })).body.data.leads.length as number;

describe('crm trash purge', () => {
  it('purges one organization with --org, then every organization', async () => {
    const [a, b] = [await seedOrg(t.ctx), await seedOrg(t.ctx)];
    await trashedLead(a);
    await trashedLead(b);
    const one = await run(['trash', 'purge', '--org', a.orgId]);
    expect(one.code, one.out).toBe(0);
    expect(one.json()).toEqual({ purged: 1 });
    expect([await inTrash(a), await inTrash(b)]).toEqual([0, 1]);
    const all = await run(['trash', 'purge']);
    expect(all.json()).toEqual({ purged: 1 });
    expect(await inTrash(b)).toBe(0);
    const unknown = await run(['trash', 'purge', '--org', 'ffffffffffffffffffffffff']);
    expect(unknown.code).toBe(1);
  }, 120_000);

  it('purges expired notes and tasks too, as its help says', async () => {
    const org = await seedOrg(t.ctx);
    const lead = (await call(t.app, 'POST', '/leads', { auth: org.auth, body: { name: 'Live Lead' } })).body.data.lead.id as string;
    const target = { object: 'lead', id: lead };
    const note = (await call(t.app, 'POST', '/notes', { auth: org.auth, body: { target, body: 'Old note' } })).body.data.note.id as string;
    const task = (await call(t.app, 'POST', '/tasks', { auth: org.auth, body: { target, title: 'Old task' } })).body.data.task.id as string;
    expect((await call(t.app, 'DELETE', `/notes/${note}`, { auth: org.auth })).status).toBe(200);
    expect((await call(t.app, 'DELETE', `/tasks/${task}`, { auth: org.auth })).status).toBe(200);
    const help = crm(['trash', '--help'], env);
    await help.exited;
    expect(help.output()).toContain('deleted leads, accounts, deals, records, notes and tasks');
    const purged = await run(['trash', 'purge', '--org', org.orgId]);
    expect(purged.json()).toEqual({ purged: 2 });
    for (const path of ['/notes', '/tasks']) expect((await call(t.app, 'GET', `${path}?deleted=true`, { auth: org.auth })).body.data[path.slice(1)]).toEqual([]);
  }, 120_000);
});
