import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg } from '../helpers/seed.js';
import { crmJson, databaseEnv, killSpawned, testKey } from '../helpers/processes.js';
import { listWebhooks } from '../../src/modules/webhooks/webhooks.service.js';

let t: TestApp;
let env: Record<string, string>;

beforeAll(async () => {
  t = await buildTestApp({ env: { ENCRYPTION_KEY: testKey() } });
  env = { ...databaseEnv(t), LOG_LEVEL: 'silent' };
});
afterAll(async () => {
  killSpawned();
  await t.close();
});

const run = (args: string[]) => crmJson(args, env);

describe('crm webhook', () => {
  it('create → {id, secret}; list; delete', async () => {
    const org = await seedOrg(t.ctx);
    const [created, invalid] = await Promise.all([
      run(['webhook', 'create', '--org', org.orgId, '--url', 'https://93.184.216.34/hooks', '--events', 'lead.created,lead.updated']),
      run(['webhook', 'create', '--org', org.orgId, '--url', 'https://127.0.0.1/hooks', '--events', 'lead.created,lead.exploded']),
    ]);
    expect(created.code, created.out).toBe(0);
    const { id, secret } = JSON.parse(created.out.trim().split('\n').at(-1)!);
    expect(id).toMatch(/^[0-9a-f]{24}$/);
    expect(secret).toMatch(/^whsec_/);

    // Both problems at once: an unknown event type and a loopback URL (production network policy).
    expect(invalid.code).toBe(1);
    const error = JSON.parse(invalid.out.trim().split('\n').at(-1)!);
    expect(error).toMatchObject({ status: false, code: 'VALIDATION_FAILED' });
    expect(error.errors.map((e: { field: string }) => e.field)).toContain('events.1');

    const listed = await run(['webhook', 'list', '--org', org.orgId]);
    const webhooks = JSON.parse(listed.out.trim().split('\n').at(-1)!);
    expect(webhooks).toEqual([expect.objectContaining({ id, url: 'https://93.184.216.34/hooks', events: ['lead.created', 'lead.updated'], enabled: true })]);
    expect(listed.out).not.toContain(secret);
    const lastLine = (r: { out: string }) => JSON.parse(r.out.trim().split('\n').at(-1)!);
    const [receiving, other, disabled, bad] = await Promise.all([
      run(['webhook', 'list', '--org', org.orgId, '--event-type', 'lead.updated', '--enabled', 'true']),
      run(['webhook', 'list', '--org', org.orgId, '--event-type', 'deal.created']),
      run(['webhook', 'list', '--org', org.orgId, '--enabled', 'false']),
      run(['webhook', 'list', '--org', org.orgId, '--enabled', 'maybe', '--event-type', 'lead.exploded']),
    ]);
    expect(lastLine(receiving).map((w: { id: string }) => w.id)).toEqual([id]);
    expect([lastLine(other), lastLine(disabled)]).toEqual([[], []]);
    expect(bad.code).toBe(1);
    expect(lastLine(bad).errors.map((e: { field: string }) => e.field).sort()).toEqual(['enabled', 'eventType']);

    const deleted = await run(['webhook', 'delete', id]);
    expect(JSON.parse(deleted.out.trim().split('\n').at(-1)!)).toEqual({ id, deleted: true });
    expect((await listWebhooks(t.ctx, org.orgId, { page: 1, limit: 10 })).webhooks).toEqual([]);
  }, 240_000);
});
