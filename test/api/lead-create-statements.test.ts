import type { KyselyPlugin } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/db/transaction.js';
import { prepareLeadsOf, storedInOneStatement, storePreparedLeads } from '../../src/modules/leads/leads.service.js';
import type { CreateLeadBody } from '../../src/modules/leads/leads.schemas.js';
import { setAssignmentRules } from '../../src/modules/orgs/rules.service.js';
import { call, expectError } from '../helpers/http.js';
import { roundTripsDuring } from '../helpers/pg-round-trips.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { buildTestApp, dialect, type TestApp } from '../helpers/test-app.js';

/**
 * POST /leads runs without BEGIN/COMMIT on PostgreSQL when storing the lead is one statement
 * (storedInOneStatement): that is only atomic if the store then really issues one statement. Each case here
 * counts the statements the store issues and holds the prediction against them. A lead with an e-mail, a phone
 * or an external id first locks those keys (db/key-locks.ts), so that its duplicate probe or the unique index
 * meets concurrent creates of the same values already committed: on PostgreSQL that is one statement of its
 * own, in a transaction, sent with its `begin`; on SQLite none.
 */
let t: TestApp;
let org: Seeded;
let withRules: Seeded;
let accountId: string;

beforeAll(async () => {
  t = await buildTestApp();
  org = await seedOrg(t.ctx);
  withRules = await seedOrg(t.ctx);
  await setAssignmentRules(t.ctx.database, withRules.orgId, { rules: [{ id: 'all', match: {}, assign: { type: 'user', userId: withRules.userId } }] }, new Date());
  accountId = (await call(t.app, 'POST', '/accounts', { auth: org.auth, body: { name: 'Acme' } })).body.data.account.id;
  const fields = [
    { key: 'since', label: 'Since', type: 'date' },
    { key: 'partner', label: 'Partner', type: 'relation', target: 'accounts' },
  ];
  expect((await call(t.app, 'PATCH', '/objects/leads', { auth: org.auth, body: { fields } })).status).toBe(200);
});
afterAll(async () => t.close());

async function statementsToStore(o: Seeded, input: CreateLeadBody): Promise<{ predicted: boolean; issued: number; locks: number }> {
  let issued = 0;
  let locks = 0;
  const counting: KyselyPlugin = {
    transformQuery: (args) => {
      if (args.node.kind === 'RawNode' && args.node.sqlFragments.join('?').includes('pg_advisory_xact_lock')) locks += 1;
      return args.node;
    },
    transformResult: async (args) => {
      issued += 1;
      return args.result;
    },
  };
  const prepared = await prepareLeadsOf(t.ctx, t.ctx.database.db, o.orgId, [input]);
  const caller = { organizationId: o.orgId, actor: { type: 'SYSTEM' as const, id: 'test', channel: 'API' as const } };
  await inTransaction(t.ctx, (trx) => storePreparedLeads(trx.withPlugin(counting), caller, prepared));
  return { predicted: storedInOneStatement(prepared), issued, locks };
}

let serial = 0;
const lead = (extra: Partial<CreateLeadBody> = {}): CreateLeadBody => {
  serial += 1;
  return { name: `Lead ${serial}`, email: `lead${serial}@statements.example`, phoneNumber: `+1415555${String(1000 + serial)}`, ...extra };
};

describe('storedInOneStatement', () => {
  it('is true exactly when the store issues one statement (only on PostgreSQL, for a lead with no key to lock)', async () => {
    const noKeys = { email: undefined, phoneNumber: undefined };
    const cases: [string, Seeded, CreateLeadBody, boolean, number][] = [
      ['a name only', org, lead(noKeys), true, 0],
      ['name, e-mail and phone', org, lead(), false, 1],
      ['an external id', org, lead({ ...noKeys, externalId: `ext-${serial}` }), false, 1],
      ['an owner to check', org, lead({ ...noKeys, ownerId: org.userId }), false, 0],
      ['an account to check', org, lead({ ...noKeys, accountId }), false, 0],
      ['an assignment rule to run', withRules, lead(noKeys), false, 0],
      ['an indexed custom value', org, lead({ ...noKeys, since: '2026-01-02' } as Partial<CreateLeadBody>), false, 0],
      ['a relation to check', org, lead({ ...noKeys, partner: accountId } as Partial<CreateLeadBody>), false, 0],
    ];
    for (const [what, o, input, onPostgres, locksOnPostgres] of cases) {
      const { predicted, issued, locks } = await statementsToStore(o, input);
      expect({ what, predicted, locks }).toEqual({ what, predicted: dialect === 'postgres' && onPostgres, locks: dialect === 'postgres' ? locksOnPostgres : 0 });
      if (predicted) expect({ what, issued }).toEqual({ what, issued: 1 });
      else expect(issued, what).toBeGreaterThan(dialect === 'postgres' ? 1 : 0);
    }
  });

  it('a lead with an e-mail and a phone: on PostgreSQL its keys locked, its duplicate probed, then the lead and its event (three statements)', async () => {
    const { issued, locks } = await statementsToStore(org, lead());
    if (dialect === 'postgres') expect({ issued, locks }).toEqual({ issued: 3, locks: 1 });
    else expect(locks).toBe(0);
  });

  it('a create without a transaction stores the lead and its event, and refuses a taken external id cleanly', async () => {
    const res = await call(t.app, 'POST', '/leads', { auth: org.auth, body: { name: 'Solo', externalId: 'solo-1' } });
    expect(res.status).toBe(201);
    const id = res.body.data.lead.id;
    const events = await t.ctx.database.db.selectFrom('events').select('type').where('object_id', '=', id).execute();
    expect(events.map((e) => e.type)).toEqual(['lead.created']);
    const again = await call(t.app, 'POST', '/leads', { auth: org.auth, body: { name: 'Solo again', externalId: 'solo-1' } });
    expect(again.status).toBe(409);
    const count = await t.ctx.database.db.selectFrom('leads').select('id').where('organization_id', '=', org.orgId).where('name', '=', 'Solo again').execute();
    expect(count).toEqual([]);
  });
});

/**
 * What a create costs PostgreSQL is mostly its round trips (docs/performance.md), counted here on the wire.
 */
describe.runIf(dialect === 'postgres')('round trips of POST /leads (PostgreSQL)', () => {
  it('a lead with an e-mail: four (begin with its key lock; the duplicate probe; the lead and its event; commit), five when it has a duplicate', async () => {
    // A first request fills the key cache, which later ones read instead of the database.
    expect((await call(t.app, 'POST', '/leads', { auth: org.auth, body: { name: 'Warm-up' } })).status).toBe(201);
    const create = () => call(t.app, 'POST', '/leads', { auth: org.auth, body: { name: 'Round trips', email: 'round-trips@statements.example' } });
    const first = await roundTripsDuring(create);
    const second = await roundTripsDuring(create);
    expect(first.result.status).toBe(201);
    expect(second.result.body.data.lead.duplicateOf).toBe(first.result.body.data.lead.id);
    // The second also reads the lead its probe found (leadsBySeq).
    for (const [{ sent }, probes] of [[first, 1], [second, 2]] as const) {
      expect(sent, JSON.stringify(sent)).toHaveLength(3 + probes);
      expect(sent[0]).toMatch(/^begin; select pg_advisory_xact_lock\(k\) from unnest\('\{-?\d+\}'::bigint\[\]\)/);
      expect(sent.slice(1)).toEqual([...Array(probes + 1).fill('(extended)'), 'commit']);
    }
  });
});
