import { CrmApiError, etagOf, type CrmClient } from '@crm/sdk';
import { describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/test-app.js';
import type { Seeded } from '../helpers/seed.js';
import { useSdkApp } from '../helpers/sdk.js';

/** The SDK's ETag helpers against the real server: etagOf, ifMatch on writes, getIfChanged. */
describe('SDK optimistic concurrency', () => {
  let t: TestApp;
  let s: Seeded;
  let crm: CrmClient;

  useSdkApp((app) => {
    ({ t, s, crm } = app);
  });

  it('a lost update is refused: the second writer gets 412 with the current lead, tagged, and retries with its tag', async () => {
    const created = await crm.leads.create({ name: 'Sdk Okapi' });
    const mine = await crm.leads.get(created.id);
    const theirs = await crm.leads.get(created.id);
    expect(etagOf(mine)).toMatch(/^".+"$/);
    expect(etagOf(created)).toBe(etagOf(mine));
    expect(JSON.stringify(mine)).not.toContain('crm-sdk');

    const first = await crm.leads.update(mine.id, { company: 'Zoo' }, { ifMatch: etagOf(mine) });
    const refused = await crm.leads.update(theirs.id, { title: 'Keeper' }, { ifMatch: etagOf(theirs) }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(CrmApiError);
    const error = refused as CrmApiError;
    expect(error).toMatchObject({ status: 412, code: 'PRECONDITION_FAILED' });
    const current = error.data!.lead as typeof first;
    expect(current).toEqual(first);
    expect(etagOf(current)).toBe(etagOf(first));
    const merged = await crm.leads.update(theirs.id, { title: 'Keeper' }, { ifMatch: etagOf(current) });
    expect(merged).toMatchObject({ company: 'Zoo', title: 'Keeper' });
  });

  it('getIfChanged is undefined while the lead is unchanged, the new version after a change', async () => {
    const lead = await crm.leads.create({ name: 'Sdk Quokka' });
    expect(await crm.leads.getIfChanged(lead)).toBeUndefined();
    await crm.leads.update(lead.id, { status: 'CONTACTED' });
    expect(await crm.leads.getIfChanged(lead)).toMatchObject({ id: lead.id, status: 'CONTACTED' });
  });

  it('batch results carry their items\' tags: the one get answers, and ifMatch for updateMany', async () => {
    const [created] = await crm.accounts.batch([{ name: 'Sdk Batch Co' }]);
    const account = created!.account!;
    expect(etagOf(account)).toBe(created!.etag);
    expect(etagOf(account)).toBe(etagOf(await crm.accounts.get(account.id)));
    expect(JSON.stringify(account)).not.toContain(created!.etag);
    const [updated] = await crm.accounts.updateMany([{ id: account.id, industry: 'Tools', ifMatch: etagOf(account) }]);
    expect(updated!.status).toBe(200);
    const [stale] = await crm.accounts.updateMany([{ id: account.id, industry: 'Toys', ifMatch: etagOf(account) }]);
    expect(stale).toMatchObject({ status: 412, error: { code: 'PRECONDITION_FAILED' } });
    expect(etagOf(stale!.account!)).toBe(etagOf(updated!.account!));
  });

  it('delete and restore honour ifMatch', async () => {
    const deal = await crm.deals.create({ name: 'Sdk Deal' });
    const stale = etagOf(deal);
    await crm.deals.update(deal.id, { stage: 'proposal' });
    await expect(crm.deals.delete(deal.id, {}, { ifMatch: stale })).rejects.toMatchObject({ status: 412 });
    const deleted = await crm.deals.delete(deal.id, {}, { ifMatch: etagOf(await crm.deals.get(deal.id)) });
    expect(await crm.deals.restore(deal.id, { ifMatch: etagOf(deleted) })).toMatchObject({ id: deal.id, deletedAt: null });
  });
});
