import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';
import { databaseEnv } from '../helpers/processes.js';
import { runCli } from '../helpers/cli.js';
import { get } from '../helpers/admin.js';
import { selfSignedCertificate } from '../helpers/tls.js';
import { createOrganization } from '../../src/modules/orgs/orgs.service.js';
import { seedOrg } from '../helpers/seed.js';
import { call } from '../helpers/http.js';

let t: TestApp;
let env: Record<string, string>;

beforeAll(async () => {
  t = await buildTestApp();
  env = { ...databaseEnv(t), LOG_LEVEL: 'silent' };
});
afterAll(() => t.close());

const lastJson = (out: string) => JSON.parse(out.trim().split('\n').at(-1)!);
/** Each test starts the CLI as its own process: seconds on a quiet machine, far more with the CPU contended. */
const CLI_TIMEOUT = 120_000;

describe('crm org list', () => {
  it('lists every organization, oldest first, as JSON and as lines', async () => {
    const paris = await createOrganization(t.ctx, { name: 'Paris office', timezone: 'Europe/Paris' });
    // Two organizations made in the same millisecond have no older one (their ids' tails are random): wait for the next.
    while (Date.now() <= Date.parse(paris.createdAt)) await new Promise((resolve) => setTimeout(resolve, 1));
    const tokyo = await createOrganization(t.ctx, { name: 'Tokyo office', timezone: 'Asia/Tokyo' });
    const [json, human] = await Promise.all([runCli(['--json', 'org', 'list'], env), runCli(['org', 'list'], env)]);
    expect(json.code, json.stderr).toBe(0);
    const listed = lastJson(json.stdout) as { id: string; name: string; timezone: string; createdAt: string }[];
    expect(listed.map((o) => [o.id, o.name, o.timezone])).toEqual([
      [paris.id, 'Paris office', 'Europe/Paris'],
      [tokyo.id, 'Tokyo office', 'Asia/Tokyo'],
    ]);
    expect(human.stdout).toMatch(new RegExp(`^${paris.id}  Paris office  Europe/Paris  created \\S+\\n${tokyo.id}  Tokyo office`, 'm'));
  }, CLI_TIMEOUT);
});

describe('crm admin setup-link', () => {
  it('points at where the server listens with the same configuration: https with TLS, loopback for a wildcard HOST', async () => {
    const tls = selfSignedCertificate();
    const org = await createOrganization(t.ctx, { name: 'Served over TLS' });
    const serverEnv = { ...env, PORT: '8443', HOST: '0.0.0.0', TLS_CERT_FILE: tls.certFile, TLS_KEY_FILE: tls.keyFile };
    const served = await runCli(['--json', 'admin', 'setup-link', '--org', org.id], serverEnv);
    expect(served.code, served.stderr).toBe(0);
    const url = new URL(lastJson(served.stdout).url);
    expect(`${url.origin}${url.pathname}`).toBe('https://127.0.0.1:8443/admin/setup');
    // The printed token is a live one: the console opens its setup form.
    expect((await get(t.app, `${url.pathname}${url.search}`)).status).toBe(200);
  }, CLI_TIMEOUT);
});

describe('crm with a bad setting', () => {
  it('says what is wrong in one line, without a stack trace, and exits 1 (migrate, serve and the rest alike)', async () => {
    for (const [command, settings, message] of [
      [['migrate'], { NODE_ENV: 'production', ENCRYPTION_KEY: '' }, 'error: ENCRYPTION_KEY is required in production'],
      [['org', 'list'], { METRICS_TOKEN: 'short' }, 'error: Invalid configuration: METRICS_TOKEN'],
    ] as const) {
      const res = await runCli([...command], { ...env, ...settings });
      expect(res.code, res.stderr).toBe(1);
      expect(res.stderr.trim()).toMatch(new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}[^\\n]*$`));
    }
  }, CLI_TIMEOUT);
});

describe('crm with a bad argument', () => {
  it('names one bad field once, and lists several under their count', async () => {
    const org = await createOrganization(t.ctx, { name: 'Argued', timezone: 'UTC' });
    const one = await runCli(['key', 'create', '--org', org.id, '--scopes', 'leads:raed'], env);
    expect(one.code, one.stderr).toBe(1);
    expect(one.stderr.trim()).toBe('error: scopes: unknown scopes: leads:raed');
    const several = await runCli(['user', 'create', '--org', org.id, '--email', 'not-an-email', '--name', ''], env);
    expect(several.code, several.stderr).toBe(1);
    expect(several.stderr.trim().split('\n').length, several.stderr).toBeGreaterThan(1);
  }, CLI_TIMEOUT);
});

describe('crm erase', () => {
  it('reports what it removed in words', async () => {
    const org = await seedOrg(t.ctx);
    expect((await call(t.app, 'POST', '/leads', { auth: org.auth, body: { name: 'Erased', email: 'erase.me@example.com' } })).status).toBe(201);
    const res = await runCli(['erase', '--org', org.orgId, '--email', 'erase.me@example.com'], env);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/ completed: 1 lead, 0 accounts, 0 deals, 0 records removed\n$/);
  }, CLI_TIMEOUT);

  it('names its flags, not the API fields, in what it refuses', async () => {
    const org = await seedOrg(t.ctx);
    const none = await runCli(['erase', '--org', org.orgId], env);
    expect(none.code).toBe(1);
    expect(none.stderr).toBe('error: --email: is required, or --phone (give one or both)\n');
    const bad = await runCli(['erase', '--org', org.orgId, '--email', 'ada@example.com', '--phone', '12'], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^error: --phone: must be a valid phone number/);
  }, CLI_TIMEOUT);
});

describe('crm export-subject', () => {
  const EMAIL = 'export.me@example.com';
  let org: Awaited<ReturnType<typeof seedOrg>>;
  let dir: string;
  /** The API's answer for the same person: what the command must write. */
  let apiFile: unknown;

  beforeAll(async () => {
    org = await seedOrg(t.ctx);
    dir = mkdtempSync(join(tmpdir(), 'crm-export-'));
    const lead = await call(t.app, 'POST', '/leads', { auth: org.auth, body: { name: 'Exported', email: EMAIL } });
    expect(lead.status).toBe(201);
    const target = { object: 'lead', id: lead.body.data.lead.id };
    expect((await call(t.app, 'POST', '/notes', { auth: org.auth, body: { target, body: 'Asked for a copy of her data' } })).status).toBe(201);
    expect((await call(t.app, 'POST', '/accounts', { auth: org.auth, body: { name: 'Exported Ltd', email: EMAIL } })).status).toBe(201);
    await call(t.app, 'POST', '/leads', { auth: org.auth, body: { name: 'Someone else', email: 'someone.else@example.com' } });
    const api = await call(t.app, 'GET', `/privacy/subject?email=${encodeURIComponent(EMAIL)}`, { auth: org.auth });
    expect(api.status).toBe(200);
    apiFile = api.body;
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes the file GET /privacy/subject answers, to standard output by default', async () => {
    const res = await runCli(['export-subject', '--org', org.orgId, '--email', ` ${EMAIL.toUpperCase()} `], env);
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toEqual(apiFile);
  }, CLI_TIMEOUT);

  it('with --out, creates the file readable by its owner only, says what it holds in one line, and never replaces a file', async () => {
    const out = join(dir, 'subject.json');
    const res = await runCli(['export-subject', '--org', org.orgId, '--email', EMAIL, '--out', out], env);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toBe(`Exported to ${out}: 1 lead, 1 account, 0 deals, 0 records, 1 note, 0 tasks, 3 events\n`);
    expect(JSON.parse(readFileSync(out, 'utf8'))).toEqual(apiFile);
    expect(statSync(out).mode & 0o777).toBe(0o600);

    const taken = join(dir, 'taken.json');
    writeFileSync(taken, 'kept');
    const refused = await runCli(['--json', 'export-subject', '--org', org.orgId, '--email', EMAIL, '--out', taken], env);
    expect(refused.code).toBe(1);
    expect(lastJson(refused.stdout)).toMatchObject({ status: false, code: 'CONFLICT', message: `${taken} exists: choose another name, or remove it first` });
    expect(readFileSync(taken, 'utf8')).toBe('kept');

    const nowhere = join(dir, 'missing-folder', 'subject.json');
    const lost = await runCli(['export-subject', '--org', org.orgId, '--email', EMAIL, '--out', nowhere], env);
    expect(lost.code).toBe(1);
    expect(lost.stderr).toBe(`error: can't create ${nowhere}: its folder does not exist\n`);
  }, CLI_TIMEOUT);

  it('names its flags in what it refuses, and an unknown organization', async () => {
    const none = await runCli(['export-subject', '--org', org.orgId], env);
    expect(none.code).toBe(1);
    expect(none.stderr).toBe('error: --email: is required, or --phone (give one or both)\n');
    const bad = await runCli(['export-subject', '--org', org.orgId, '--phone', '12'], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^error: --phone: must be a valid phone number/);
    const unknown = await runCli(['export-subject', '--org', '000000000000000000000000', '--email', EMAIL], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^error: Organization .*not found/);
  }, CLI_TIMEOUT);
});
