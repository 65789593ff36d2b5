import { execSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrate.js';
import { buildTestApp, dialect, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';

/**
 * The release an upgrade starts from. Bump it to the last deployed release when cutting a new one; the test
 * then proves that release keeps serving while this one's migrations run (expand/contract, docs/operations.md).
 */
const PREVIOUS_RELEASE = '57fe6d36eeb948e4b02622ea2bbb9700f3c2650f';
const ROOT = join(import.meta.dirname, '..', '..');

/** The previous release's source tree, from git history, with this checkout's dependencies. */
function checkoutPreviousRelease(): string {
  const dir = mkdtempSync(join(tmpdir(), 'crm-prev-release-'));
  execSync(`git -C ${JSON.stringify(ROOT)} archive --format=tar ${PREVIOUS_RELEASE} src package.json | tar -x -C ${JSON.stringify(dir)}`);
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

function runPreviousRelease(dir: string, env: Record<string, string>): Promise<{ key: string; leadId: string; results: { step: string; status: number; body: any }[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'test', 'helpers', 'previous-release-driver.ts'), dir], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop()!)) : reject(new Error(`previous release exited ${code}: ${err}`))));
  });
}

describe('a previous release on the newest schema (rolling upgrade)', () => {
  let t: TestApp;
  let s: Seeded;
  let dir: string;
  let run: Awaited<ReturnType<typeof runPreviousRelease>>;
  let newLeadId: string;

  beforeAll(async () => {
    t = await buildTestApp(); // migrated to the newest schema by this release
    s = await seedOrg(t.ctx);
    const created = await call(t.app, 'POST', '/leads', { auth: s.auth, body: { name: 'Written By New', email: 'written.by.new@example.com', phoneNumber: '+14155550199' } });
    newLeadId = created.body.data.lead.id;
    dir = checkoutPreviousRelease();
    run = await runPreviousRelease(dir, {
      DATABASE_URL: t.config.database.url,
      ENCRYPTION_KEY: t.config.encryptionKeys[0]!,
      ...(dialect === 'postgres' ? { PG_SCHEMA: t.location } : {}),
      NEW_KEY: s.key,
      NEW_LEAD_ID: newLeadId,
    });
  }, 120_000);
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves its whole lead API without error', () => {
    const statuses = Object.fromEntries(run.results.map((r) => [r.step, r.status]));
    expect(statuses).toEqual({
      'create lead': 201,
      'replay create': 201,
      'get lead': 200,
      'update lead': 200,
      'search by e-mail': 200,
      'search by name': 200,
      list: 200,
      me: 200,
      'read a lead written by the new release': 200,
    });
    const byEmail = run.results.find((r) => r.step === 'search by e-mail')!.body.data.leads;
    expect(byEmail.map((l: { id: string }) => l.id)).toEqual([run.leadId]);
    expect(run.results.find((r) => r.step === 'read a lead written by the new release')!.body.data.lead).toMatchObject({ email: 'written.by.new@example.com', phoneNumber: '+14155550199' });
  });

  it('what the previous release wrote, this release reads (including its encrypted fields and search)', async () => {
    const auth = { authorization: `Bearer ${run.key}` };
    const lead = await call(t.app, 'GET', `/leads/${run.leadId}`, { auth });
    expect(lead.body.data.lead).toMatchObject({ name: 'Written By Old', email: 'written.by.old@example.com', phoneNumber: '+14155550178', status: 'CONTACTED' });
    const found = await call(t.app, 'GET', `/leads?q=${encodeURIComponent('+14155550178')}`, { auth });
    expect(found.body.data.leads.map((l: { id: string }) => l.id)).toEqual([run.leadId]);
  });

  it('this release restarts on a database a newer release has migrated further', async () => {
    await sql`insert into kysely_migration (name, timestamp) values ('9999_from_a_newer_release', ${new Date().toISOString()})`.execute(t.ctx.database.db);
    const result = await migrateToLatest(t.ctx.database);
    expect(result.error).toBeUndefined();
    expect((await call(t.app, 'GET', '/me', { auth: s.auth })).status).toBe(200);
  });
});
