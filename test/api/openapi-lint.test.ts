import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import openapiTS, { astToString } from 'openapi-typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../src/modules/events/events.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';

// What an integrator runs: Redocly's linter with the recommended rules (redocly.yaml) and openapi-typescript + tsc,
// on the generic document and on an organization's (typed custom objects). New routes are covered as they appear.

const run = promisify(execFile);
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;
const ROOT = resolve(import.meta.dirname, '../..');
const require = createRequire(import.meta.url);
const REDOCLY = join(ROOT, 'node_modules/@redocly/cli/bin/cli.js');
const TSC = require.resolve('typescript/bin/tsc');
const DOC = '/api/public/v1/openapi.json';
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

let t: TestApp;
let org: Seeded;
let dir: string;
const docs: Record<'generic' | 'organization', any> = { generic: undefined, organization: undefined };

beforeAll(async () => {
  t = await buildTestApp();
  org = await seedOrg(t.ctx);
  dir = mkdtempSync(join(tmpdir(), 'crm-openapi-lint-'));
  const fields = [
    { key: 'title', label: 'Title', type: 'text', required: true },
    { key: 'budget', label: 'Budget', type: 'number' },
    { key: 'due_on', label: 'Due on', type: 'date', role: 'due' },
    { key: 'tags', label: 'Tags', type: 'multi_select', options: ['hot', 'cold'] },
    { key: 'lead', label: 'Lead', type: 'relation', target: 'leads' },
  ];
  // Two slugs that spell the same words: their typed operations still need distinct ids.
  for (const slug of ['site-visits', 'site_visits']) {
    const res = await call(t.app, 'POST', '/objects', { auth: org.auth, body: { slug, name: slug, fields, stages: [{ key: 'planned', label: 'Planned' }] } });
    expect(res.status).toBe(201);
  }
  // Custom fields on the built-ins change the Lead, Account and Deal schemas that many examples show.
  const custom = {
    leads: [{ key: 'visitDate', label: 'Visit date', type: 'date' }, { key: 'tier', label: 'Tier', type: 'select', options: ['gold', 'silver'] }],
    accounts: [{ key: 'partner', label: 'Partner', type: 'relation', target: 'accounts' }],
    deals: [{ key: 'code', label: 'Code', type: 'text', required: true }],
  };
  for (const [slug, added] of Object.entries(custom)) {
    const res = await call(t.app, 'PATCH', `/objects/${slug}`, { auth: org.auth, body: { fields: added } });
    expect(res.status).toBe(200);
  }
  docs.generic = (await call(t.app, 'GET', DOC)).body;
  docs.organization = (await call(t.app, 'GET', DOC, { auth: org.auth })).body;
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await t.close();
});

function operations(doc: any): { where: string; op: any }[] {
  const sections = [...Object.entries(doc.paths ?? {}), ...Object.entries(doc.webhooks ?? {})] as [string, any][];
  return sections.flatMap(([path, item]) => Object.entries(item).filter(([m]) => METHODS.includes(m)).map(([m, op]) => ({ where: `${m.toUpperCase()} ${path}`, op })));
}

describe.each(['generic', 'organization'] as const)('the %s OpenAPI document', (which) => {
  it('passes `redocly lint` with the recommended rules: no error, no warning', async () => {
    const file = join(dir, `${which}.json`);
    writeFileSync(file, JSON.stringify(docs[which]));
    const env = { ...process.env, REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', REDOCLY_TELEMETRY: 'off' };
    const { stdout } = await run(process.execPath, [REDOCLY, 'lint', file, '--format=json'], { cwd: ROOT, env, maxBuffer: 16 << 20 }).catch((err) => err);
    const report = JSON.parse(stdout);
    const problems = report.problems.map((p: any) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location?.[0]?.pointer}`);
    expect(problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  }, 120_000);

  it('names every operation and webhook with a unique operationId', () => {
    const ids = operations(docs[which]).map(({ where, op }) => {
      expect(op.operationId, where).toMatch(/^[a-z][A-Za-z0-9_-]*$/);
      return op.operationId;
    });
    expect(ids.length).toBeGreaterThan(30);
    expect(ids.filter((id, i) => ids.indexOf(id) !== i)).toEqual([]);
  });

  it('requires no parameter that has a default (page, limit)', () => {
    const defaulted = operations(docs[which]).flatMap(({ where, op }) =>
      (op.parameters ?? []).filter((p: any) => p.required && p.schema?.default !== undefined).map((p: any) => `${where} ${p.name}`));
    expect(defaulted).toEqual([]);
    const list = docs[which].paths['/api/public/v1/leads'].get.parameters;
    expect(list.filter((p: any) => ['page', 'limit'].includes(p.name)).map((p: any) => p.required)).toEqual([false, false]);
  });

  it('documents the request-id and rate-limit headers, examples, and errors as shared, described responses', () => {
    const { components } = docs[which];
    for (const { where, op } of operations({ paths: docs[which].paths })) {
      for (const [status, response] of Object.entries(op.responses) as [string, any][]) {
        const resolved = response.$ref ? components.responses[response.$ref.split('/').pop()] : response;
        expect(resolved, `${where} ${status}`).toBeDefined();
        expect(resolved.description, `${where} ${status}`).not.toBe('Default Response');
        const headers = Object.keys(resolved.headers ?? {});
        expect(headers, `${where} ${status}`).toContain('X-Request-Id');
        if (status !== '401') expect(headers, `${where} ${status}`).toEqual(expect.arrayContaining(['RateLimit-Policy', 'RateLimit', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']));
        if (status === '429') expect(headers).toContain('Retry-After');
        if (Number(status) < 300 && resolved.content) expect(resolved.content['application/json'].example, `${where} ${status}`).toMatchObject({ status: true, data: expect.any(Object) });
        if (Number(status) >= 400) {
          expect(response.$ref, `${where} ${status}`).toMatch(/^#\/components\/responses\//);
          const body = resolved.content['application/json'];
          expect(body.schema).toEqual({ $ref: '#/components/schemas/ErrorEnvelope' });
          expect(components.schemas.ErrorEnvelope.properties.code.enum).toContain(body.example.code);
          expect(body.example).toMatchObject({ status: false, requestId: expect.any(String), message: expect.any(String) });
        }
      }
    }
    expect(Object.keys(components.headers)).toEqual(expect.arrayContaining(['X-Request-Id', 'Retry-After']));
  });

  it('gives examples that match their schemas (responses, errors, webhook bodies)', () => {
    const { components } = docs[which];
    const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
    // Our own format: any string that libphonenumber reads (the API checks it; the document only names it).
    ajv.addFormat('phone', true);
    // The components are added once, under an id of their own; each body's references point there, so a schema
    // that many bodies share (Lead, the error envelope) is compiled once, not once per body.
    const DOCUMENT = 'https://openapi.test/document';
    ajv.addSchema({ $id: DOCUMENT, components });
    const bodies = operations(docs[which]).flatMap(({ where, op }) => [
      ...Object.entries(op.responses).map(([status, r]: [string, any]) => [`${where} ${status}`, (r.$ref ? components.responses[r.$ref.split('/').pop()] : r).content?.['application/json']]),
      [`${where} body`, op.requestBody?.content?.['application/json']],
      // A schema's own first example (the batch bodies carry theirs there): with custom fields required on the
      // organization's leads or deals, a batch example without them would be a body the API refuses.
      [`${where} body schema`, ((schema) => schema?.examples && { schema, example: schema.examples[0] })(op.requestBody?.content?.['application/json']?.schema)],
    ]).filter(([, body]) => body?.example !== undefined);
    expect(bodies.length).toBeGreaterThan(50);
    for (const [where, body] of bodies) {
      const validate = ajv.compile(JSON.parse(JSON.stringify(body.schema).replaceAll('"#/components/', `"${DOCUMENT}#/components/`)));
      expect(validate(body.example) ? [] : validate.errors, where).toEqual([]);
    }
  });

  it('lists every event type under `webhooks` with the event body', () => {
    const { webhooks } = docs[which];
    expect(Object.keys(webhooks).sort()).toEqual([...EVENT_TYPES].sort());
    for (const type of EVENT_TYPES) {
      const body = webhooks[type].post.requestBody.content['application/json'];
      expect(body.schema.allOf[0]).toEqual({ $ref: '#/components/schemas/WebhookEvent' });
      expect(body.schema.allOf[1].properties.type.const).toBe(type);
      expect(body.example.type).toBe(type);
    }
    expect(docs[which].components.schemas.WebhookEvent.properties.type.enum).toEqual([...EVENT_TYPES]);
  });
});

describe('a client generated with openapi-typescript', () => {
  it('compiles with tsc --strict, calling list operations without page or limit', async () => {
    writeFileSync(join(dir, 'api.ts'), astToString(await openapiTS(docs.organization)));
    writeFileSync(
      join(dir, 'client.ts'),
      `import type { components, operations, webhooks } from './api.js';

type Query<O extends keyof operations> = NonNullable<operations[O]['parameters']['query']>;
type Ok<O extends keyof operations, S extends number> =
  operations[O]['responses'] extends { [K in S]: { content: { 'application/json': infer B } } } ? B : never;

async function get<O extends keyof operations>(path: string, key: string, query: Query<O>): Promise<Ok<O, 200>> {
  const url = new URL(path, 'http://127.0.0.1:3000');
  for (const [name, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(name, String(value));
  const res = await fetch(url, { headers: { authorization: 'Bearer ' + key } });
  return (await res.json()) as Ok<O, 200>;
}

export async function firstLeadNames(key: string): Promise<string[]> {
  const page = await get<'listLeads'>('/api/public/v1/leads', key, {});
  const next = await get<'listLeads'>('/api/public/v1/leads', key, { after: page.data.pagination.nextCursor ?? undefined });
  return [...page.data.leads, ...next.data.leads].map((lead: components['schemas']['Lead']) => lead.name);
}

export async function visitTitles(key: string): Promise<string[]> {
  const page = await get<'listSiteVisitsRecords'>('/api/public/v1/objects/site-visits/records', key, { limit: 10 });
  return page.data.records.map((r) => r.title);
}

export const rateLimited: Ok<'listLeads', 429>['code'] = 'RATE_LIMITED';
export const onLead = (event: NonNullable<webhooks['lead.created']['post']>['requestBody']['content']['application/json']): string => event.data.id;
`,
    );
    const args = ['--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--lib', 'es2022,dom', join(dir, 'client.ts')];
    const result = await run(process.execPath, [TSC, ...args], { cwd: dir }).then(() => '', (err) => String(err.stdout || err));
    expect(result).toBe('');
  }, 120_000);
});
