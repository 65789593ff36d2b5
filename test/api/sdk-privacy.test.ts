import { createClient, CrmApiError, type CrmClient } from '@crm/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { addKey, seedOrg, type Seeded } from '../helpers/seed.js';
import { listen } from '../helpers/mcp.js';

/** The SDK's privacy calls against the real server: export, erase with its receipt, list, and the scope error. */
describe('SDK privacy', () => {
  let t: TestApp;
  let s: Seeded;
  let crm: CrmClient;
  let origin: string;

  beforeAll(async () => {
    t = await buildTestApp();
    origin = await listen(t);
    s = await seedOrg(t.ctx);
    crm = createClient({ baseUrl: origin, apiKey: s.key });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('exports, erases and lists erasures', async () => {
    const lead = await crm.leads.create({ name: 'Sdk Subject', email: 'sdk.subject@example.com' });
    const file = await crm.privacy.export({ email: 'sdk.subject@example.com' });
    expect(file.leads.map((l) => l.id)).toEqual([lead.id]);
    const erasure = await crm.privacy.erase({ email: 'sdk.subject@example.com', reason: 'sdk test' });
    expect(erasure).toMatchObject({ status: 'completed', matched: { leads: 1, accounts: 0, records: 0 } });
    expect((await crm.privacy.listErasures()).erasures.map((e) => e.id)).toEqual([erasure.id]);
    expect((await crm.privacy.export({ email: 'sdk.subject@example.com' })).leads).toEqual([]);
  });

  it('a key without privacy:write gets INSUFFICIENT_SCOPE', async () => {
    const reader = createClient({ baseUrl: origin, apiKey: (await addKey(t.ctx, s.orgId, ['privacy:read'])).key });
    const err = await reader.privacy.erase({ email: 'x@example.com' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CrmApiError);
    expect((err as CrmApiError).code).toBe('INSUFFICIENT_SCOPE');
  });
});
