/**
 * Runs inside a child process against the source tree of an older release (argv[2]): builds that release's
 * app on an existing database WITHOUT migrating it (a running older instance during a rolling upgrade) and
 * exercises its queries through its own HTTP API. Prints one JSON line of results.
 */
import { pathToFileURL } from 'node:url';
import { join } from 'node:path';

const release = process.argv[2]!;
const load = (path: string) => import(pathToFileURL(join(release, 'src', path)).href);

const { loadConfig } = await load('config.ts');
const { createContext, closeContext } = await load('context.ts');
const { openDatabase } = await load('db/database.ts');
const { buildApp } = await load('app.ts');
const { createOrganization, createUser, createApiKey } = await load('modules/orgs/orgs.service.ts');

const config = loadConfig(process.env, () => undefined);
const database = openDatabase({ ...config.database, ...(process.env.PG_SCHEMA ? { schema: process.env.PG_SCHEMA, poolSize: 2 } : {}) });
const ctx = await createContext(config, { database, migrate: false });
const app = await buildApp(ctx, { logger: false });

const org = await createOrganization(ctx, { name: 'Old release org' });
const user = await createUser(ctx, { organizationId: org.id, email: 'old.release.owner@example.com', name: 'Old Owner' });
const key = await createApiKey(ctx, { organizationId: org.id, userId: user.id, scopes: ['leads:read', 'leads:write'] });
const auth = { authorization: `Bearer ${key.key}` };

const results: { step: string; status: number; body: any }[] = [];
async function step(name: string, method: 'GET' | 'POST' | 'PATCH', url: string, opts: { body?: unknown; headers?: Record<string, string> } = {}) {
  const res = await app.inject({
    method,
    url: `/api/public/v1${url}`,
    headers: { ...auth, ...(opts.body ? { 'content-type': 'application/json' } : {}), ...opts.headers },
    ...(opts.body ? { payload: JSON.stringify(opts.body) } : {}),
  });
  const body = JSON.parse(res.body);
  results.push({ step: name, status: res.statusCode, body });
  return body;
}

const created = await step('create lead', 'POST', '/leads', {
  body: { name: 'Written By Old', email: 'written.by.old@example.com', phoneNumber: '+14155550177', source: 'WEBSITE' },
  headers: { 'idempotency-key': 'old-release-1' },
});
const id = created.data?.lead?.id;
await step('replay create', 'POST', '/leads', {
  body: { name: 'Written By Old', email: 'written.by.old@example.com', phoneNumber: '+14155550177', source: 'WEBSITE' },
  headers: { 'idempotency-key': 'old-release-1' },
});
await step('get lead', 'GET', `/leads/${id}`);
await step('update lead', 'PATCH', `/leads/${id}`, { body: { status: 'CONTACTED', phoneNumber: '+14155550178' } });
await step('search by e-mail', 'GET', `/leads?q=${encodeURIComponent('written.by.old@example.com')}`);
await step('search by name', 'GET', '/leads?q=by%20old');
await step('list', 'GET', '/leads?page=1&limit=5');
await step('me', 'GET', '/me');
if (process.env.NEW_LEAD_ID) {
  results.push({ step: 'read a lead written by the new release', ...(await readWith(process.env.NEW_KEY!, process.env.NEW_LEAD_ID)) });
}

async function readWith(k: string, leadId: string) {
  const res = await app.inject({ method: 'GET', url: `/api/public/v1/leads/${leadId}`, headers: { authorization: `Bearer ${k}` } });
  return { status: res.statusCode, body: JSON.parse(res.body) };
}

await app.close();
await closeContext(ctx);
console.log(JSON.stringify({ key: key.key, leadId: id, results }));
