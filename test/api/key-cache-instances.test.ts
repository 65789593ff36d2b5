import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { revokeApiKey } from '../../src/modules/orgs/orgs.service.js';
import { setAssignmentRules } from '../../src/modules/orgs/rules.service.js';
import { buildTestApp, dialect, type TestApp } from '../helpers/test-app.js';
import { addKey, addUser, seedOrg, type Seeded } from '../helpers/seed.js';
import { call, expectError } from '../helpers/http.js';
import { eventually } from '../helpers/receiver.js';

/**
 * Two instances on one PostgreSQL database, each with its key lookup cache (LISTEN/NOTIFY keeps them
 * honest). A change made with triggers disabled sends no notification: that is how these tests see that an
 * instance really answers from its cache, so that the revocations below are checked against a warm one.
 */
describe.runIf(dialect === 'postgres')('key lookup cache across instances (PostgreSQL)', () => {
  let one: TestApp;
  let two: TestApp;
  let org: Seeded;
  let silent: pg.Client;

  beforeAll(async () => {
    one = await buildTestApp();
    two = await buildTestApp({ sameDatabaseAs: one });
    org = await seedOrg(one.ctx);
    silent = new pg.Client({ connectionString: one.config.database.url, options: `-c search_path=${one.location},public` });
    await silent.connect();
    await silent.query('set session_replication_role = replica');
  });
  afterAll(async () => {
    await silent?.end();
    await two?.close();
    await one?.close();
  });

  const nameOnTwo = async (auth: Seeded['auth']) => (await call(two.app, 'GET', '/me', { auth })).body.data.me.key.name as string;

  /** Waits until `two` serves `keyId` from its cache: a rename nobody is told about goes unseen there. */
  async function warmOnTwo(keyId: string, auth: Seeded['auth']): Promise<void> {
    await eventually(async () => {
      const before = await nameOnTwo(auth);
      await silent.query('update api_keys set name = $1 where id = $2', [`unseen ${randomBytes(4).toString('hex')}`, keyId]);
      expect(await nameOnTwo(auth)).toBe(before);
    });
  }

  it('serves a key from memory once its instance listens (a change without notification goes unseen)', async () => {
    const k = await addKey(one.ctx, org.orgId, ['leads:read']);
    await warmOnTwo(k.keyId, k.auth);
    expect((await call(two.app, 'GET', '/leads', { auth: k.auth })).status).toBe(200);
  });

  it('a revocation through one instance is refused by the other on the very next request', async () => {
    const k = await addKey(one.ctx, org.orgId, ['leads:read']);
    await warmOnTwo(k.keyId, k.auth);
    expect((await call(one.app, 'GET', '/leads', { auth: k.auth })).status).toBe(200);
    await revokeApiKey(one.ctx, k.keyId, org.orgId);
    expectError(await call(two.app, 'GET', '/leads', { auth: k.auth }), 401, 'UNAUTHORIZED');
    expectError(await call(one.app, 'GET', '/leads', { auth: k.auth }), 401, 'UNAUTHORIZED');
  });

  it('an organization renamed elsewhere empties the caches too', async () => {
    const k = await addKey(one.ctx, org.orgId, ['leads:read']);
    await warmOnTwo(k.keyId, k.auth);
    await one.ctx.database.db.updateTable('organizations').set({ name: 'Renamed Org' }).where('id', '=', org.orgId).execute();
    await one.ctx.database.changesSeen!();
    expect((await call(two.app, 'GET', '/me', { auth: k.auth })).body.data.me.organization.name).toBe('Renamed Org');
  });

  /** Assignment rules are cached too (migration 0026): what each instance gives the next new lead as owner. */
  const ownerOfNewLead = async (app: TestApp) =>
    (await call(app.app, 'POST', '/leads', { auth: org.auth, body: { name: `Routed ${randomBytes(3).toString('hex')}`, source: 'WEBSITE' } })).body.data.lead.ownerId as string | null;

  it('serves assignment rules from memory, and rules set through one instance route the next lead on the other', async () => {
    const [first, second] = [await addUser(one.ctx, org.orgId, 'First'), await addUser(one.ctx, org.orgId, 'Second')];
    const rulesFor = (userId: string) => ({ rules: [{ id: 'web', match: { source: 'WEBSITE' }, assign: { type: 'user', userId } }] });
    await setAssignmentRules(one.ctx.database, org.orgId, rulesFor(first), new Date());
    expect(await ownerOfNewLead(two)).toBe(first);
    // Rules changed with no notification go unseen on a warm instance: it answers from its cache.
    await silent.query('update assignment_rules set rules = $1 where organization_id = $2', [JSON.stringify(rulesFor(second).rules), org.orgId]);
    expect(await ownerOfNewLead(two)).toBe(first);
    await setAssignmentRules(one.ctx.database, org.orgId, rulesFor(second), new Date());
    expect(await ownerOfNewLead(two)).toBe(second);
    await setAssignmentRules(one.ctx.database, org.orgId, { rules: [] }, new Date());
    expect(await ownerOfNewLead(two)).toBeNull();
  });
});
