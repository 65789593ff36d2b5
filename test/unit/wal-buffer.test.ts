import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqlite } from '../../src/db/database.js';
import { registerWalBuffer, walBufferStats } from '../../src/db/wal-buffer.js';

const EXTENSION = join(import.meta.dirname, '..', '..', 'native', 'build', 'wal-buffer.so');

/** native/wal-buffer.c: SQLite's WAL writes gathered into a few system calls, nothing else changed. */
describe('the WAL write buffer', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'crm-wal-buffer-'));
    registerWalBuffer();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const fill = (db: SqliteDatabase.Database, rows: number, from = 0) => {
    const insert = db.prepare('insert into t (k, v) values (?, ?)');
    db.transaction(() => {
      for (let i = from; i < from + rows; i++) insert.run(`${(i * 2_654_435_761) % 1_000_003}-${i}`, 'v'.repeat(200));
    })();
  };

  it('writes a commit of hundreds of frames in a few writes, and every connection reads what it committed', () => {
    const file = join(dir, 'a.db');
    const writer = openSqlite(file);
    writer.exec('create table t (id integer primary key, k text not null, v text not null); create index t_k on t (k)');
    const reader = new SqliteDatabase(file, { readonly: true });
    const before = walBufferStats();
    // 2,000 rows of ~230 bytes with a random-order index: ~250 pages a commit, ~1 MB of WAL, past the 128 KiB a
    // single write of SQLite's unix layer may carry.
    for (let n = 0; n < 10; n++) {
      fill(writer, 2_000, n * 2_000);
      expect(reader.prepare('select count(*) from t').pluck().get()).toBe((n + 1) * 2_000);
    }
    const after = walBufferStats();
    const asked = after.asked - before.asked;
    const written = after.written - before.written;
    expect(asked).toBeGreaterThan(2 * 10 * 100); // two writes a frame, over 100 frames a commit
    expect(written).toBeLessThan(asked / 20);
    expect(after.commits - before.commits).toBe(10);
    // Every frame asked for is counted: a 24-byte header and a 4 KiB page, two writes.
    expect(after.bytes - before.bytes).toBe((asked / 2) * (24 + 4096));
    expect(writer.pragma('integrity_check', { simple: true })).toBe('ok');
    reader.close();
    writer.close();
    const again = new SqliteDatabase(file, { readonly: true });
    expect(again.prepare('select count(*) from t').pluck().get()).toBe(20_000);
    again.close();
  });

  it('keeps a rolled-back transaction that spilled frames into the WAL out of the database', () => {
    const file = join(dir, 'b.db');
    const db = openSqlite(file);
    db.exec('create table t (id integer primary key, k text not null, v text not null); create index t_k on t (k)');
    fill(db, 1_000);
    db.pragma('cache_size = 20'); // pages: the big transaction below spills frames before it ends
    expect(() =>
      db.transaction(() => {
        fill(db, 5_000, 1_000);
        throw new Error('rolled back');
      })(),
    ).toThrow('rolled back');
    fill(db, 100, 10_000);
    expect(db.prepare('select count(*) from t').pluck().get()).toBe(1_100);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    db.close();
  });

  it('loses no acknowledged commit when the process is killed mid-write', async () => {
    const file = join(dir, 'c.db');
    const script = join(dir, 'writer.mjs');
    // The child commits batches as fast as it can and prints each count once its COMMIT has returned.
    writeFileSync(
      script,
      `import Database from ${JSON.stringify(require.resolve('better-sqlite3'))};
       const m = new Database(':memory:'); m.loadExtension(${JSON.stringify(EXTENSION)}); m.close();
       const db = new Database(${JSON.stringify(file)});
       db.pragma('journal_mode = WAL'); db.pragma('synchronous = NORMAL');
       db.exec('create table t (id integer primary key, k text not null, v text not null); create index t_k on t (k)');
       const insert = db.prepare('insert into t (k, v) values (?, ?)');
       let n = 0;
       const batch = db.transaction(() => { for (let i = 0; i < 500; i++, n++) insert.run(String(Math.random()), 'v'.repeat(300)); });
       for (;;) { batch(); process.stdout.write(n + '\\n'); }`,
    );
    const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let acknowledged = 0;
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        const lines = chunk.toString().trim().split('\n');
        acknowledged = Number(lines[lines.length - 1]);
        if (acknowledged >= 50_000) resolve();
      });
    });
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    const db = new SqliteDatabase(file);
    expect(db.prepare('select count(*) from t').pluck().get()).toBeGreaterThanOrEqual(acknowledged);
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    db.close();
  });
});
