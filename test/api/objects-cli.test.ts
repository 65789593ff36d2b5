import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { registerObjectCommands } from '../../src/cli/objects.commands.js';
import { registerOrgCommands } from '../../src/cli/orgs.commands.js';
import { buildTestApp, dialect, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';

let t: TestApp;
let a: Seeded;
let dir: string;

const savedEnv = { DATABASE_URL: process.env.DATABASE_URL, ENCRYPTION_KEY: process.env.ENCRYPTION_KEY, LOG_LEVEL: process.env.LOG_LEVEL };

beforeAll(async () => {
  t = await buildTestApp();
  a = await seedOrg(t.ctx);
  dir = mkdtempSync(join(tmpdir(), 'crm-cli-'));
  // The commands build their own context from the environment, as `crm` does: point it at the test database.
  const url = new URL(dialect === 'postgres' ? t.config.database.url : 'file:///');
  url.searchParams.set('options', `-c search_path=${t.location},public`);
  Object.assign(process.env, { DATABASE_URL: dialect === 'postgres' ? url.toString() : t.location, ENCRYPTION_KEY: t.config.encryptionKeys[0], LOG_LEVEL: 'silent' });
});
afterAll(async () => {
  // The next test file in this worker (files share a process, vitest.config.ts) must not inherit the database.
  for (const [name, value] of Object.entries(savedEnv)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  rmSync(dir, { recursive: true, force: true });
  await t.close();
});

/** Runs `crm …` in-process with the real command definitions; returns exit code and output. */
async function crm(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const program = new Command('crm').option('--json').exitOverride();
  registerOrgCommands(program);
  registerObjectCommands(program);
  const stdout: string[] = [];
  const stderr: string[] = [];
  const log = vi.spyOn(console, 'log').mockImplementation((line: unknown) => void stdout.push(String(line)));
  const error = vi.spyOn(console, 'error').mockImplementation((line: unknown) => void stderr.push(String(line)));
  try {
    await program.parseAsync(['node', 'crm', ...args]);
    return { code: Number(process.exitCode ?? 0), stdout: stdout.join('\n'), stderr: stderr.join('\n') };
  } finally {
    process.exitCode = undefined;
    log.mockRestore();
    error.mockRestore();
  }
}

const file = (name: string, content: unknown) => {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(content));
  return path;
};

describe('crm object create and crm org update', () => {
  it('defines an object from a file, refuses a bad one with every error, and changes the time zone', async () => {
    const good = file('def.json', { slug: 'vehicles', name: 'Vehicles', fields: [{ key: 'plate', label: 'Plate', type: 'text', required: true }, { key: 'service_on', label: 'Service', type: 'date', role: 'due' }], stages: [{ key: 'active', label: 'Active' }] });
    const bad = file('bad.json', { slug: 'Bad', name: 'Bad', fields: [{ key: 'id', label: 'Id', type: 'text' }, { key: 'x', label: 'X', type: 'colour' }] });
    const created = await crm('object', 'create', '--org', a.orgId, '--file', good, '--json');
    const refused = await crm('object', 'create', '--org', a.orgId, '--file', bad);
    const updated = await crm('org', 'update', '--org', a.orgId, '--timezone', 'Europe/Berlin', '--name', 'Renamed by CLI', '--json');

    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ slug: 'vehicles', name: 'Vehicles', fields: [{ key: 'plate', required: true }, { key: 'service_on', role: 'due', required: false }], stages: [{ key: 'active' }] });
    const api = await call(t.app, 'GET', '/objects/vehicles', { auth: a.auth });
    expect(api.body.data.object.fields).toHaveLength(2);

    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/slug/);
    expect(refused.stderr).toMatch(/fields\.1\.type/);
    expect((await call(t.app, 'GET', '/objects/Bad', { auth: a.auth })).status).toBe(404);

    expect(updated.code, updated.stderr).toBe(0);
    expect(JSON.parse(updated.stdout)).toMatchObject({ id: a.orgId, name: 'Renamed by CLI', timezone: 'Europe/Berlin' });
    expect((await call(t.app, 'GET', '/me', { auth: a.auth })).body.data.me.organization.timezone).toBe('Europe/Berlin');
  });

  it('refuses a bad time zone and an existing slug with --json error envelopes', async () => {
    const again = file('again.json', { slug: 'vehicles', name: 'Again' });
    const zone = await crm('org', 'update', '--org', a.orgId, '--timezone', 'Nowhere/Land', '--json');
    const taken = await crm('object', 'create', '--org', a.orgId, '--file', again, '--json');
    expect(zone.code).toBe(1);
    expect(JSON.parse(zone.stdout)).toMatchObject({ status: false, code: 'VALIDATION_FAILED', errors: [{ field: 'timezone' }] });
    expect(taken.code).toBe(1);
    expect(JSON.parse(taken.stdout)).toMatchObject({ status: false, code: 'CONFLICT' });
  });
});
