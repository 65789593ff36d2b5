import type { CrmClient } from '@crm/sdk';
import { describe, expect, it } from 'vitest';
import type { TestApp } from '../helpers/test-app.js';
import type { Seeded } from '../helpers/seed.js';
import { useSdkApp } from '../helpers/sdk.js';
import { call } from '../helpers/http.js';

/** The SDK's delete, restore and trash listing, and its batch writes: the same on every resource. */
describe('SDK trash and batch writes', () => {
  let t: TestApp;
  let s: Seeded;
  let crm: CrmClient;

  useSdkApp(async (app) => {
    ({ t, s, crm } = app);
    await call(t.app, 'POST', '/objects', { auth: s.auth, body: { slug: 'crates', name: 'Crates', fields: [{ key: 'title', label: 'Title', type: 'text' }] } });
  });

  it('deletes, lists the trash, restores and deletes for good', async () => {
    const resources = [
      { api: crm.leads, item: await crm.leads.create({ name: 'Sdk Tapir' }) },
      { api: crm.accounts, item: await crm.accounts.create({ name: 'Sdk Tapir' }) },
      { api: crm.deals, item: await crm.deals.create({ name: 'Sdk Tapir' }) },
      { api: crm.records('crates'), item: await crm.records('crates').create({ title: 'Sdk Tapir' }) },
    ] as const;
    for (const { api, item } of resources) {
      const deleted = await api.delete(item.id);
      expect(deleted).toMatchObject({ id: item.id, deletedAt: expect.any(String) });
      const trash = (await api.list({ deleted: true })) as unknown as Record<string, { id: string }[]>;
      expect(Object.values(trash).find(Array.isArray)!.map((x) => x.id)).toEqual([item.id]);
      await expect(api.get(item.id)).rejects.toMatchObject({ status: 404, code: 'NOT_FOUND' });
      expect(await api.restore(item.id)).toMatchObject({ id: item.id, deletedAt: null });
      expect((await api.get(item.id)).id).toBe(item.id);
      await api.delete(item.id, { permanent: true });
      await expect(api.restore(item.id)).rejects.toMatchObject({ status: 404 });
    }
  });

  it('creates, upserts by external id and updates many, with one result per item', async () => {
    const resources = [
      { api: crm.leads, noun: 'lead', body: { name: 'Sdk Okapi' } },
      { api: crm.accounts, noun: 'account', body: { name: 'Sdk Okapi' } },
      { api: crm.deals, noun: 'deal', body: { name: 'Sdk Okapi' } },
      { api: crm.records('crates'), noun: 'record', body: { title: 'Sdk Okapi' } },
    ] as const;
    for (const { api, noun, body } of resources) {
      const created = (await api.batch([{ ...body, externalId: `sdk-${noun}` }, { ...body, externalId: '' }] as never)) as Record<string, any>[];
      expect(created.map((r) => r.status)).toEqual([201, 400]);
      const id = created[0]![noun].id;
      const upserted = (await api.upsert([{ ...body, externalId: `sdk-${noun}` }] as never, { by: 'externalId' })) as Record<string, any>[];
      expect(upserted[0]).toMatchObject({ index: 0, status: 200, [noun]: { id } });
      const updated = (await api.updateMany([{ id, externalId: `sdk-${noun}-2` }] as never)) as Record<string, any>[];
      expect(updated[0]).toMatchObject({ status: 200, [noun]: { id, externalId: `sdk-${noun}-2` } });
    }
    const byEmail = await crm.leads.upsert([{ name: 'Mail One', email: 'sdk.one@example.com' }, { name: 'Mail Two', email: 'SDK.one@example.com' }], { by: 'email' });
    expect(byEmail.map((r) => r.status)).toEqual([201, 200]);
    expect(byEmail[1]!.lead!.id).toBe(byEmail[0]!.lead!.id);
  });
});
