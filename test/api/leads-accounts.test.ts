import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call, expectError } from '../helpers/http.js';

let t: TestApp;
let a: Seeded;
let b: Seeded;
let ownAccount: string;
let foreignAccount: string;

beforeAll(async () => {
  t = await buildTestApp();
  a = await seedOrg(t.ctx);
  b = await seedOrg(t.ctx);
  ownAccount = (await call(t.app, 'POST', '/accounts', { auth: a.auth, body: { name: 'Own' } })).body.data.account.id;
  foreignAccount = (await call(t.app, 'POST', '/accounts', { auth: b.auth, body: { name: 'Foreign' } })).body.data.account.id;
});
afterAll(() => t.close());

describe('lead accountId', () => {
  it('accepts an account of the same organization on create and patch, and clears with null', async () => {
    const lead = (await call(t.app, 'POST', '/leads', { auth: a.auth, body: { name: 'Linked', accountId: ownAccount } })).body.data.lead;
    expect(lead.accountId).toBe(ownAccount);
    const cleared = await call(t.app, 'PATCH', `/leads/${lead.id}`, { auth: a.auth, body: { accountId: null } });
    expect(cleared.body.data.lead.accountId).toBeNull();
    const relinked = await call(t.app, 'PATCH', `/leads/${lead.id}`, { auth: a.auth, body: { accountId: ownAccount } });
    expect(relinked.body.data.lead.accountId).toBe(ownAccount);
  });

  it("refuses another organization's account or an unknown one on create, listing it with a bad owner", async () => {
    const foreign = expectError(await call(t.app, 'POST', '/leads', { auth: a.auth, body: { name: 'X', accountId: foreignAccount } }), 400, 'VALIDATION_FAILED');
    expect(foreign).toEqual([{ field: 'accountId', code: 'not_found', message: expect.any(String) }]);
    const both = expectError(await call(t.app, 'POST', '/leads', { auth: a.auth, body: { name: 'X', accountId: '0000000000000000deadbeef', ownerId: b.userId } }), 400, 'VALIDATION_FAILED');
    expect(both.map((e) => [e.field, e.code]).sort()).toEqual([['accountId', 'not_found'], ['ownerId', 'not_found']]);
    const list = await call(t.app, 'GET', '/leads?q=X', { auth: a.auth });
    expect(list.body.data.leads).toEqual([]);
  });

  it("refuses another organization's account on patch and leaves the lead unchanged", async () => {
    const lead = (await call(t.app, 'POST', '/leads', { auth: a.auth, body: { name: 'Kept', accountId: ownAccount } })).body.data.lead;
    const errors = expectError(await call(t.app, 'PATCH', `/leads/${lead.id}`, { auth: a.auth, body: { accountId: foreignAccount } }), 400, 'VALIDATION_FAILED');
    expect(errors[0]).toMatchObject({ field: 'accountId', code: 'not_found' });
    expect((await call(t.app, 'GET', `/leads/${lead.id}`, { auth: a.auth })).body.data.lead.accountId).toBe(ownAccount);
  });
});
