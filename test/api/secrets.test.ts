import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../../src/modules/orgs/orgs.service.js';
import { buildAppWithSharedSchemas, buildTestApp, type TestApp } from '../helpers/test-app.js';
import { addKey, seedOrg, type Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';
import { runScenario, type Scenario } from '../helpers/scenario.js';
import { databaseText } from '../helpers/database-text.js';

/**
 * The whole scenario at LOG_LEVEL=debug, then every place a secret could leak is searched: the logs, the
 * error answers, the events (what webhooks carry) and the database itself.
 */
describe('secrets never in clear', () => {
  let t: TestApp;
  let s: Seeded;
  let scenario: Scenario;
  const lines: string[] = [];
  const userEmail = 'Console.User.Secret@Example.com';
  let app: Awaited<ReturnType<typeof buildAppWithSharedSchemas>>;
  let limited: Awaited<ReturnType<typeof addKey>>;

  beforeAll(async () => {
    t = await buildTestApp({ env: { LOG_LEVEL: 'debug', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
    app = await buildAppWithSharedSchemas(t.ctx, { logger: { stream: new Writable({ write(chunk, _e, cb) { lines.push(chunk.toString()); cb(); } }) } });
    await app.ready();
    s = await seedOrg(t.ctx);
    await createUser(t.ctx, { organizationId: s.orgId, email: userEmail, name: 'Console User', password: 'correct horse battery' });
    limited = await addKey(t.ctx, s.orgId, ['leads:read'], { rateLimitPerMinute: 1 });
    scenario = await runScenario(app, s, 'secrets');
    for (let i = 0; i < 2; i++) await call(app, 'GET', `/leads?q=${encodeURIComponent(scenario.leads[0]!.email)}`, { auth: limited.auth });
    // A key in the wrong place: the query string.
    await call(app, 'GET', `/me?api_key=${s.key}`);
  });
  afterAll(async () => {
    await app.close();
    await t.close();
  });

  function needles(): string[] {
    return [...scenario.secrets, s.key, s.key.slice('crm_live_'.length), limited.key, userEmail, userEmail.toLowerCase(), 'correct horse battery'];
  }

  function expectNoneIn(text: string, where: string) {
    const found = needles().filter((n) => text.includes(n));
    expect(found, `${where} contains secrets`).toEqual([]);
  }

  it('the logs, at debug level, hold one line per request and no secret', () => {
    const text = lines.join('');
    expect(app.log.level).toBe('debug');
    expect(lines.filter((l) => l.includes('request completed')).length).toBeGreaterThanOrEqual(15);
    expectNoneIn(text, 'logs');
  });

  it('error answers never echo a secret back', () => {
    expect(scenario.errorBodies.length).toBeGreaterThanOrEqual(4);
    expectNoneIn(scenario.errorBodies.join('\n'), 'error bodies');
  });

  it('events (what webhooks deliver) mark contact fields as [encrypted]', async () => {
    const events = await t.ctx.database.db.selectFrom('events').select('payload').execute();
    const text = events.map((e) => e.payload).join('\n');
    expect(events.length).toBeGreaterThanOrEqual(4);
    expect(text).toContain('[encrypted]');
    expectNoneIn(text, 'events');
  });

  it('the database holds no secret in clear (files and WAL, or every row)', async () => {
    const text = await databaseText(t);
    expect(text).toContain('Person secrets 1');
    expectNoneIn(text, 'database');
  });
});
