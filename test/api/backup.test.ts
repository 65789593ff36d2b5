import { existsSync, readFileSync, rmSync, writeFileSync, copyFileSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backupSqlite, integrityOf, restoreSqlite, sqliteFileOf } from '../../src/db/backup.js';
import { loadDatabaseConfig } from '../../src/config.js';
import { buildTestApp, dialect, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';
import { runCli } from '../helpers/cli.js';

/** Rows of a SQLite file, read with a connection of its own. */
function countsOf(file: string): { leads: number; created: number } {
  const db = new SqliteDatabase(file, { readonly: true });
  try {
    const leads = (db.prepare('select count(*) as n from leads').get() as { n: number }).n;
    const created = (db.prepare(`select count(*) as n from events where type = 'lead.created'`).get() as { n: number }).n;
    return { leads, created };
  } finally {
    db.close();
  }
}

describe.runIf(dialect === 'sqlite')('crm backup / crm restore (SQLite)', () => {
  let t: TestApp;
  let s: Seeded;
  let dir: string;
  let writing = false;
  let written = 0;

  /** Creates leads back to back until stopped: each commits a lead and its event together. */
  async function writeLoop(): Promise<void> {
    while (writing) {
      const res = await call(t.app, 'POST', '/leads', { auth: s.auth, body: { name: `Lead ${written}`, email: `lead${written}@example.com` } });
      expect(res.status).toBe(201);
      written += 1;
      await new Promise((r) => setImmediate(r));
    }
  }

  beforeAll(async () => {
    t = await buildTestApp();
    s = await seedOrg(t.ctx, { rateLimitPerMinute: 1_000_000 });
    dir = mkdtempSync(join(tmpdir(), 'crm-backup-'));
  });
  afterAll(async () => {
    writing = false;
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('copies a database that another process keeps writing to, consistently', async () => {
    writing = true;
    const loop = writeLoop();
    await new Promise((r) => setTimeout(r, 200));
    const out = join(dir, 'online.db');
    const cli = await runCli(['--json', 'backup', '--out', out], { DATABASE_URL: t.location });
    const writtenDuringBackup = written;
    await new Promise((r) => setTimeout(r, 100));
    writing = false;
    await loop;
    expect(cli.code, cli.stderr).toBe(0);
    expect(JSON.parse(cli.stdout)).toMatchObject({ file: out, bytes: expect.any(Number) });
    expect(integrityOf(out)).toBe('ok');
    const copy = countsOf(out);
    expect(copy.leads).toBeGreaterThan(0);
    // One snapshot: every lead in the copy has its event, and writes went on during the copy.
    expect(copy.created).toBe(copy.leads);
    expect(written).toBeGreaterThan(copy.leads);
    expect(writtenDuringBackup).toBeGreaterThan(0);
  }, 120_000);

  it('does not overwrite an existing file unless forced', async () => {
    const out = join(dir, 'taken.db');
    writeFileSync(out, 'keep me');
    expect(() => backupSqlite(t.location, out)).toThrow(/exists/);
    expect(readFileSync(out, 'utf8')).toBe('keep me');
    backupSqlite(t.location, out, { force: true });
    expect(integrityOf(out)).toBe('ok');
  });

  it('refuses to restore over a database a server has open, unless forced', async () => {
    const backup = join(dir, 'refuse.db');
    backupSqlite(t.location, backup);
    const cli = await runCli(['--json', 'restore', '--from', backup], { DATABASE_URL: t.location });
    expect(cli.code).toBe(1);
    expect(cli.stderr).toMatch(/in use/);
    expect(existsSync(`${t.location}.restoring`)).toBe(false);
    // The same check in process: another connection of this process counts as a user too.
    expect(() => restoreSqlite(backup, t.location)).toThrow(/in use/);
    // The server is unaffected.
    expect((await call(t.app, 'GET', '/me', { auth: s.auth })).status).toBe(200);
  });

  it('restores a backup in place of a stopped database, keeping the replaced one', async () => {
    const target = join(dir, 'target.db');
    copyFileSync(join(dir, 'online.db'), target);
    const atBackup = countsOf(target);
    const backup = join(dir, 'point-in-time.db');
    backupSqlite(target, backup);
    const raw = new SqliteDatabase(target);
    raw.prepare('delete from events').run();
    raw.close();
    const { keptAs } = restoreSqlite(backup, target, { now: new Date('2026-01-02T03:04:05Z') });
    expect(countsOf(target)).toEqual(atBackup);
    expect(keptAs).toBe(`${target}.before-restore-2026-01-02T03-04-05-000Z`);
    expect(countsOf(keptAs!).created).toBe(0);
  });

  it('restored data is readable by the application (same encryption key)', async () => {
    const restored = await buildTestApp({ sameDatabaseAs: { ...t, location: join(dir, 'target.db'), config: { ...t.config, database: { ...t.config.database, url: join(dir, 'target.db') } } } });
    try {
      const res = await call(restored.app, 'GET', '/leads?q=lead0%40example.com', { auth: s.auth });
      expect(res.status).toBe(200);
      expect(res.body.data.leads.map((l: { email: string }) => l.email)).toEqual(['lead0@example.com']);
    } finally {
      await restored.close();
    }
  });

  it('refuses a damaged backup or a file that is not a CRM database, leaving the target untouched', async () => {
    const target = join(dir, 'target.db');
    const before = countsOf(target);
    const damaged = join(dir, 'damaged.db');
    const bytes = readFileSync(join(dir, 'online.db'));
    bytes.fill(0x5a, 4096, 12_288);
    writeFileSync(damaged, bytes);
    expect(() => restoreSqlite(damaged, target)).toThrow(/Refusing to restore/);
    const notCrm = join(dir, 'other.db');
    new SqliteDatabase(notCrm).exec('create table x (y)');
    expect(() => restoreSqlite(notCrm, target)).toThrow(/not a CRM database/);
    expect(() => restoreSqlite(join(dir, 'missing.db'), target)).toThrow(/no file/);
    expect(countsOf(target)).toEqual(before);
  });

  it('--force restores under a running server, whose later writes land in the kept copy, not nowhere', async () => {
    const backup = join(dir, 'forced.db');
    backupSqlite(t.location, backup);
    const atBackup = countsOf(backup);
    const { keptAs } = restoreSqlite(backup, t.location, { force: true });
    expect((await call(t.app, 'POST', '/leads', { auth: s.auth, body: { name: 'After the forced restore' } })).status).toBe(201);
    expect(countsOf(t.location)).toEqual(atBackup);
    expect(countsOf(keptAs!).leads).toBe(atBackup.leads + 1);
  });

  it('points PostgreSQL users to pg_dump', () => {
    expect(() => sqliteFileOf(loadDatabaseConfig({ DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none' }))).toThrow(/pg_dump/);
    expect(sqliteFileOf(loadDatabaseConfig({ DATABASE_URL: t.location }))).toBe(t.location);
  });
});
