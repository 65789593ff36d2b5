import type { RouteOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES, type Scope } from '../../src/modules/orgs/principal.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { addKey, seedOrg, type Seeded } from '../helpers/seed.js';
import { API, call, expectError, type Res } from '../helpers/http.js';
import { fingerprinter } from '../helpers/db-fingerprint.js';

/**
 * The isolation matrix, generated from the app's route table: every authenticated route under the API
 * prefix, every scope, and every route that addresses a resource by id tried with another organization's
 * ids. A new route is in the matrix the moment it is registered; one the fixtures below cannot address
 * fails the test until a fixture is added.
 */
type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
interface ApiRoute {
  method: Method;
  /** Relative to the API prefix, Fastify syntax: /leads/:id. */
  path: string;
  anyOf: Scope[];
  example: unknown;
}

interface Fixture {
  /**
   * Creates one resource of `owner` through the API and returns the path parameters that address it; may
   * give `intruder` lookalikes (an object with the same slug) so that only the id can make the difference.
   */
  create(t: TestApp, owner: Seeded, intruder: Seeded): Promise<Record<string, string>>;
  /** A valid body per method for the routes under this prefix, so that a 404 is never masked by a 400. */
  bodies?: Partial<Record<Method, unknown>>;
}

async function created(res: Res, key: string): Promise<string> {
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data[key].id as string;
}

/** Keyed by the path up to and including its last parameter; the longest matching key applies. */
const FIXTURES: Record<string, Fixture> = {
  '/leads/:id': {
    create: async (t, org) => ({ id: await created(await call(t.app, 'POST', '/leads', { auth: org.auth, body: { name: 'Isolated Lead', email: 'isolated@example.com' } }), 'lead') }),
    bodies: { PATCH: { status: 'CONTACTED' } },
  },
  '/accounts/:id': {
    create: async (t, org) => ({ id: await created(await call(t.app, 'POST', '/accounts', { auth: org.auth, body: { name: 'Isolated Account', email: 'isolated@account.example' } }), 'account') }),
    bodies: { PATCH: { industry: 'Retail' } },
  },
  '/objects/:slug': {
    create: async (t, owner) => ({ slug: await createObject(t, owner, 'isolated_object') }),
    bodies: { PATCH: { name: 'Renamed' } },
  },
  '/objects/:object': {
    create: async (t, owner) => ({ object: await createObject(t, owner, 'isolated_parent') }),
    bodies: { POST: { title: 'Owner only' } },
  },
  '/objects/:object/records/batch': {
    create: async (t, owner) => ({ object: await createObject(t, owner, 'isolated_batch') }),
    bodies: { POST: { items: [{ title: 'Owner only' }] }, PATCH: { items: [{ id: 'abcdefabcdefabcdefabcdef', title: 'Owner only' }] } },
  },
  '/objects/:object/records/:id': {
    create: async (t, owner, intruder) => {
      const object = await createObject(t, owner, 'isolated_records');
      await createObject(t, intruder, 'isolated_records');
      const id = await created(await call(t.app, 'POST', `/objects/${object}/records`, { auth: owner.auth, body: { title: 'Isolated record', contact: 'record@example.com' } }), 'record');
      return { object, id };
    },
    bodies: { PATCH: { title: 'Changed' } },
  },
  '/webhooks/:id': {
    create: async (t, owner) => ({ id: await createWebhook(t, owner) }),
    bodies: { PATCH: { description: 'Renamed' } },
  },
  '/webhooks/:id/deliveries/:deliveryId': {
    create: async (t, owner) => {
      const id = await createWebhook(t, owner);
      const test = await call(t.app, 'POST', `/webhooks/${id}/test`, { auth: owner.auth, body: {} });
      return { id, deliveryId: await created(test, 'delivery') };
    },
  },
  '/users/:id': {
    create: async (_t, owner) => ({ id: owner.userId }),
  },
  '/deals/:id': {
    create: async (t, org) => ({ id: await created(await call(t.app, 'POST', '/deals', { auth: org.auth, body: { name: 'Isolated Deal', stage: 'qualification' } }), 'deal') }),
    bodies: { PATCH: { stage: 'proposal' } },
  },
  '/notes/:id': {
    create: async (t, org) => {
      const lead = await created(await call(t.app, 'POST', '/leads', { auth: org.auth, body: { name: 'Noted Lead' } }), 'lead');
      return { id: await created(await call(t.app, 'POST', '/notes', { auth: org.auth, body: { target: { object: 'lead', id: lead }, body: 'Isolated note' } }), 'note') };
    },
    bodies: { PATCH: { body: 'Changed' } },
  },
  '/tasks/:id': {
    create: async (t, org) => ({ id: await created(await call(t.app, 'POST', '/tasks', { auth: org.auth, body: { title: 'Isolated task' } }), 'task') }),
    bodies: { PATCH: { status: 'done' } },
  },
};

async function createObject(t: TestApp, org: Seeded, slug: string): Promise<string> {
  const res = await call(t.app, 'POST', '/objects', {
    auth: org.auth,
    body: { slug, name: slug, fields: [{ key: 'title', label: 'Title', type: 'text' }, { key: 'contact', label: 'Contact', type: 'email' }] },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return slug;
}

async function createWebhook(t: TestApp, org: Seeded): Promise<string> {
  return created(await call(t.app, 'POST', '/webhooks', { auth: org.auth, body: { url: 'http://127.0.0.1:9/isolated', events: ['*'] } }), 'webhook');
}

function fixtureFor(path: string): Fixture | undefined {
  const key = Object.keys(FIXTURES)
    .filter((k) => path === k || path.startsWith(`${k}/`))
    .sort((a, b) => b.length - a.length)[0];
  return key ? FIXTURES[key] : undefined;
}

const hasParams = (path: string) => path.includes('/:');
const fill = (path: string, params: Record<string, string>) => path.replace(/:(\w+)/g, (_, name: string) => params[name] ?? `missing-${name}`);
/** Any well-formed id: the scope check happens before anything is looked up. */
const anyIds = (path: string) => path.replace(/:(\w+)/g, 'abcdefabcdefabcdefabcdef');

const RATE_LIMIT_HEADERS = ['ratelimit-policy', 'ratelimit', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];

let t: TestApp;
let a: Seeded;
let b: Seeded;
const routes: ApiRoute[] = [];

beforeAll(async () => {
  const seen: RouteOptions[] = [];
  t = await buildTestApp({ onRoute: (r) => seen.push(r), env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
  for (const r of seen) {
    const auth = (r.config as { auth?: { anyOf: Scope[] } } | undefined)?.auth;
    const methods = ([] as string[]).concat(r.method);
    if (!auth || !r.url.startsWith(API)) continue;
    for (const method of methods) {
      // HEAD mirrors GET through the same hooks; the body-less answer has no envelope to check.
      if (method === 'HEAD') continue;
      const body = (r.schema as { body?: { examples?: unknown[] } } | undefined)?.body;
      routes.push({ method: method as Method, path: r.url.slice(API.length), anyOf: auth.anyOf, example: body?.examples?.[0] });
    }
  }
  a = await seedOrg(t.ctx, { rateLimitPerMinute: 1_000_000 });
  b = await seedOrg(t.ctx, { rateLimitPerMinute: 1_000_000 });
});
afterAll(() => t.close());

describe('the route table', () => {
  it('is read from the app, not listed by hand', () => {
    expect(routes.map((r) => `${r.method} ${r.path}`)).toEqual(expect.arrayContaining(['GET /leads', 'POST /leads', 'GET /leads/:id', 'PATCH /leads/:id', 'GET /me']));
  });
});

describe('every scope against every route', () => {
  // Every route times every scope (over 1,000 requests, more with each route): minutes on a loaded machine.
  it('403 INSUFFICIENT_SCOPE exactly when the key holds none of the scopes the route accepts; every answer carries the rate-limit headers', async () => {
    const keys = new Map<Scope, Seeded['auth']>();
    for (const scope of SCOPES) keys.set(scope, (await addKey(t.ctx, a.orgId, [scope], { rateLimitPerMinute: 1_000_000 })).auth);
    const failures: string[] = [];
    for (const route of routes) {
      for (const scope of SCOPES) {
        const res = await call(t.app, route.method, API + anyIds(route.path), { auth: keys.get(scope)!, ...(route.method === 'GET' ? {} : { body: route.example ?? {} }) });
        const allowed = route.anyOf.length === 0 || route.anyOf.includes(scope);
        const label = `${route.method} ${route.path} with ${scope}: ${res.status} ${res.body?.code}`;
        // Subscribing a URL to events also takes their read scopes (the example's lead events: leads:read).
        const readScopesToo = route.path === '/webhooks' && route.method === 'POST' && res.body?.message?.includes('needs the scope leads:read');
        if (allowed && res.status === 403 && !readScopesToo) failures.push(`${label} (should be allowed)`);
        // Whatever the answer (403, 404, 400, 200), an authenticated request spent a unit and says so.
        if (RATE_LIMIT_HEADERS.some((h) => res.headers[h] === undefined)) failures.push(`${label} (rate-limit headers missing)`);
        if (!allowed) {
          if (res.status !== 403 || res.body.code !== 'INSUFFICIENT_SCOPE') failures.push(`${label} (should be 403)`);
          else expect(res.body.message).toContain(route.anyOf[0]);
        }
      }
    }
    expect(failures).toEqual([]);
  }, 120_000);
});

describe("another organization's ids", () => {
  it('every route that takes an id has a fixture (add one to FIXTURES for a new resource)', () => {
    const missing = routes.filter((r) => hasParams(r.path) && !fixtureFor(r.path)).map((r) => `${r.method} ${r.path}`);
    expect(missing).toEqual([]);
  });

  it('answer 404 NOT_FOUND to organization A, write nothing, and do exist for organization B', async () => {
    const addressed = routes.filter((r) => hasParams(r.path) && fixtureFor(r.path));
    const paramsOf = new Map<Fixture, Record<string, string>>();
    for (const route of addressed) {
      const fixture = fixtureFor(route.path)!;
      if (!paramsOf.has(fixture)) paramsOf.set(fixture, await fixture.create(t, b, a));
    }
    const bodyFor = (route: ApiRoute) => (route.method === 'GET' || route.method === 'DELETE' ? undefined : fixtureFor(route.path)!.bodies?.[route.method] ?? route.example ?? {});
    const fingerprint = await fingerprinter(t);
    const before = await fingerprint();
    for (const route of addressed) {
      const url = fill(route.path, paramsOf.get(fixtureFor(route.path)!)!);
      const body = bodyFor(route);
      expectError(await call(t.app, route.method, url, { auth: a.auth, ...(body !== undefined ? { body } : {}) }), 404, 'NOT_FOUND');
    }
    expect(await fingerprint()).toBe(before);
    // The same requests by the owner succeed: the ids were real, the 404s were isolation. Deletes go last,
    // then restores (which bring back what the deletes moved to the trash).
    const rank = (r: ApiRoute) => (r.path.endsWith('/restore') ? 2 : Number(r.method === 'DELETE'));
    const ownerOrder = [...addressed].sort((x, y) => rank(x) - rank(y));
    for (const route of ownerOrder) {
      const url = fill(route.path, paramsOf.get(fixtureFor(route.path)!)!);
      const body = bodyFor(route);
      const res = await call(t.app, route.method, url, { auth: b.auth, ...(body !== undefined ? { body } : {}) });
      expect(res.status, `${route.method} ${url} by its owner: ${JSON.stringify(res.body)}`).toBeLessThan(300);
    }
  });
});
