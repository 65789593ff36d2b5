import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { closeContext, createContext, type AppContext } from '../../src/context.js';
import { createApiKey, createOrganization, revokeApiKey } from '../../src/modules/orgs/orgs.service.js';
import { dialect } from '../helpers/test-app.js';
import { scratchDatabase } from '../helpers/scratch-database.js';
import { hasPgBouncer, startPgBouncer } from '../helpers/pgbouncer.js';
import { freePort, spawnCrm, waitUntilServing, type CrmProcess } from '../helpers/server-process.js';

/**
 * `crm serve` through PgBouncer in transaction mode (DATABASE_TRANSACTION_POOLER=true): statements of one
 * request land on whichever server connection is free, so nothing may rely on a session — named prepared
 * statements, LISTEN. Runs where PgBouncer is installed (apt-get install pgbouncer).
 */
describe.runIf(dialect === 'postgres' && hasPgBouncer)('through PgBouncer in transaction mode', () => {
  let db: Awaited<ReturnType<typeof scratchDatabase>>;
  let bouncer: Awaited<ReturnType<typeof startPgBouncer>>;
  let ctx: AppContext;
  let server: CrmProcess;
  let api: string;
  let orgId: string;
  let key: string;

  const call = (method: string, path: string, body?: unknown, auth = key) =>
    fetch(`${api}/api/public/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${auth}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });

  beforeAll(async () => {
    db = await scratchDatabase();
    bouncer = await startPgBouncer(db.url);
    const env = {
      DATABASE_URL: bouncer.url,
      DATABASE_TRANSACTION_POOLER: 'true',
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
      LOG_LEVEL: 'warn',
      HOST: '127.0.0.1',
      RATE_LIMIT_PER_MINUTE: '100000',
    };
    ctx = await createContext(loadConfig(env));
    orgId = (await createOrganization(ctx, { name: 'Pooled' })).id;
    key = (await createApiKey(ctx, { organizationId: orgId, scopes: ['leads:read', 'leads:write', 'objects:admin', 'records:write'] })).key;
    const port = await freePort();
    server = spawnCrm(['serve'], { ...env, PORT: String(port) });
    api = `http://127.0.0.1:${port}`;
    await waitUntilServing(api, server);
  }, 120_000);

  afterAll(async () => {
    await server?.stop('SIGTERM');
    if (ctx) await closeContext(ctx);
    await bouncer?.stop();
    await db?.drop();
  });

  it('serves concurrent writes and reads, each statement on any server connection', async () => {
    const created = await Promise.all(
      Array.from({ length: 24 }, (_, i) => call('POST', '/leads', { name: `Pooled ${i}`, email: `pooled${i % 12}@example.com` })),
    );
    expect(created.map((r) => r.status)).toEqual(Array(24).fill(201));
    const ids = await Promise.all(created.map(async (r) => ((await r.json()) as { data: { lead: { id: string } } }).data.lead.id));
    const read = await Promise.all(ids.map((id) => call('GET', `/leads/${id}`)));
    expect(read.map((r) => r.status)).toEqual(Array(24).fill(200));
    const found = (await (await call('GET', `/leads?q=${encodeURIComponent('pooled3@example.com')}`)).json()) as { data: { leads: unknown[] } };
    expect(found.data.leads).toHaveLength(2);
    expect((await call('POST', '/objects', { slug: 'visits', name: 'Visits', fields: [{ key: 'title', label: 'Title', type: 'text' }] })).status).toBe(201);
    const records = await Promise.all(Array.from({ length: 12 }, (_, i) => call('POST', '/objects/visits/records', { title: `Visit ${i}` })));
    expect(records.map((r) => r.status)).toEqual(Array(12).fill(201));
  });

  it('a revocation takes effect on the next request (no cache without LISTEN)', async () => {
    const other = await createApiKey(ctx, { organizationId: orgId, scopes: ['leads:read'] });
    expect((await call('GET', '/leads', undefined, other.key)).status).toBe(200);
    await revokeApiKey(ctx, other.id);
    expect((await call('GET', '/leads', undefined, other.key)).status).toBe(401);
  });
});
