import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { endianness, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDatabase, openSqlite, WAL_SIZE_LIMIT_BYTES, type Database } from '../../src/db/database.js';
import { BACKGROUND_CHECKPOINT_FRAMES, WalCheckpointer } from '../../src/db/wal-checkpointer.js';
import { WriteLock } from '../../src/db/write-lock.js';

/** Frames in the WAL and frames already copied into the database file (the WAL index's mxFrame and nBackfill). */
function walIndex(file: string): { frames: number; backfilled: number } {
  const header = readFileSync(`${file}-shm`).subarray(0, 100);
  const read = (at: number) => (endianness() === 'LE' ? header.readUInt32LE(at) : header.readUInt32BE(at));
  return { frames: read(16), backfilled: read(96) };
}

/** Waits for `check` to hold, polling; fails with `what` after `ms`. */
async function until(check: () => boolean, what: string, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** SQLite's WAL checkpoints on a worker thread (wal-checkpointer.ts), through openDatabase as the server uses it. */
describe('background WAL checkpoints', () => {
  let dir: string;
  let file: string;
  let database: Database;
  // Reads the same WAL index the database's own checkpointer reads; starts no worker of its own.
  let probe: WalCheckpointer;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'crm-checkpoint-'));
    file = join(dir, 'crm.db');
    database = openDatabase({ dialect: 'sqlite', url: file });
    await sql`create table pages (n integer primary key, body blob not null)`.execute(database.db);
    probe = new WalCheckpointer(file);
  });
  afterEach(async () => {
    await probe.close();
    await database.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** `count` transactions of `rows` rows of ~3.5 KB each: about one WAL frame a row. */
  const write = async (count: number, rows: number) => {
    for (let i = 0; i < count; i++) {
      await database.transaction(async (trx) => {
        await sql`with recursive s(n) as (select 1 union all select n + 1 from s where n < ${rows}) insert into pages (body) select randomblob(3500) from s`.execute(trx);
      });
    }
  };

  it('copies the WAL into the database file once enough frames wait, without a commit doing it', async () => {
    // Below the threshold nothing is copied: the writer's automatic checkpoint is five times further away.
    await write(1, BACKGROUND_CHECKPOINT_FRAMES / 2);
    expect(probe.framesWaiting()).toBeGreaterThanOrEqual(BACKGROUND_CHECKPOINT_FRAMES / 2);
    await write(1, BACKGROUND_CHECKPOINT_FRAMES);
    await until(() => probe.framesWaiting()! < 10, 'the background checkpoint');
    const fresh = new SqliteDatabase(file, { readonly: true });
    try {
      expect(fresh.pragma('integrity_check', { simple: true })).toBe('ok');
      expect(fresh.prepare('select count(*) from pages').pluck().get()).toBe(BACKGROUND_CHECKPOINT_FRAMES * 1.5);
    } finally {
      fresh.close();
    }
  });

  it('keeps the WAL short under a steady writer: each complete copy lets the next commit rewind it', async () => {
    // 15,000 frames (~60 MB) in 150 commits. With the writer's automatic checkpoints alone (every 10,000 frames)
    // the WAL file would reach ~40 MB.
    for (let round = 0; round < 15; round++) {
      await write(10, 100);
      await until(() => probe.framesWaiting()! < BACKGROUND_CHECKPOINT_FRAMES, 'the checkpoint to catch up');
    }
    expect(statSync(`${file}-wal`).size).toBeLessThan(20 * 1024 * 1024);
    expect(await sql<{ n: number }>`select count(*) as n from pages`.execute(database.db).then((r) => Number(r.rows[0]!.n))).toBe(15_000);
  });

  it('lets the WAL rewind under a writer that never pauses: it copies the frames committed during its passive copy under the writers\' lock', async () => {
    // A raw writer without automatic checkpoints, taking the lock the group commit takes. A passive copy alone is
    // always overtaken by the next commit, so SQLite (which rewinds only for a writer that begins with every frame
    // copied) would never rewind the WAL.
    const lock = new WriteLock();
    const raw = openSqlite(file);
    raw.pragma('wal_autocheckpoint = 0');
    const checkpointer = new WalCheckpointer(file, { frames: 500, rewindFrames: 2_000, lock });
    const insert = raw.prepare('insert into pages (body) values (randomblob(3500))');
    const commit = (rows: number) =>
      raw.transaction(() => {
        for (let i = 0; i < rows; i++) insert.run();
      })();
    try {
      commit(3_000);
      const written = walIndex(file).frames;
      await lock.acquire(); // the writer is busy: the worker's copy runs beside it
      checkpointer.committed();
      await until(() => walIndex(file).backfilled >= written, 'the passive copy');
      commit(20); // committed after that copy, as a steady writer's next batch is
      lock.release();
      await until(() => walIndex(file).backfilled === walIndex(file).frames, 'the frames committed meanwhile to be copied under the lock');
      commit(1);
      expect(walIndex(file).frames).toBeLessThan(100); // this commit rewound the WAL
    } finally {
      await checkpointer.close();
      raw.close();
    }
    expect(await sql<{ n: number }>`select count(*) as n from pages`.execute(database.db).then((r) => Number(r.rows[0]!.n))).toBe(3_021);
  });

  it('lets the process go on after close() while its worker was running', () => {
    // The worker is unreferenced (an idle one must not keep the process alive); waiting for its exit at close
    // once let the event loop run dry, and Node ended the process there (exit code 13, nothing after close()).
    const script = join(dir, 'close.mts');
    writeFileSync(
      script,
      `import { openDatabase } from ${JSON.stringify(pathToFileURL(resolve('src/db/database.ts')).href)};
      const database = openDatabase({ dialect: 'sqlite', url: process.argv[2] });
      await database.db.schema.createTable('pages').addColumn('body', 'text').execute();
      await database.transaction(async (trx) => {
        for (let i = 0; i < 5; i++) await trx.insertInto('pages').values(Array.from({ length: 500 }, () => ({ body: 'x'.repeat(3500) }))).execute();
      });
      await database.close();
      console.log('closed');`,
    );
    const child = spawnSync(process.execPath, ['--import', 'tsx', script, join(dir, 'child.db')], { encoding: 'utf8', timeout: 25_000 });
    expect(child.stderr).toBe('');
    expect(child.stdout.trim()).toBe('closed');
    expect(child.status).toBe(0);
  });

  it('reads nothing and starts nothing for a database without a WAL', () => {
    const other = join(dir, 'rollback.db');
    const raw = new SqliteDatabase(other);
    raw.pragma('journal_mode = DELETE');
    raw.exec('create table t (x)');
    const checkpointer = new WalCheckpointer(other);
    expect(checkpointer.framesWaiting()).toBeUndefined();
    checkpointer.committed();
    raw.close();
    return checkpointer.close();
  });
});

describe('the WAL file after a burst', () => {
  it('is cut back to journal_size_limit when it rewinds, instead of keeping its largest size', () => {
    const dir = mkdtempSync(join(tmpdir(), 'crm-wal-limit-'));
    const file = join(dir, 'crm.db');
    const raw = openSqlite(file);
    try {
      raw.pragma('wal_autocheckpoint = 0');
      raw.exec('create table pages (n integer primary key, body blob not null)');
      // ~80 MB of WAL in one burst, nothing copied meanwhile.
      raw.exec('with recursive s(n) as (select 1 union all select n + 1 from s where n < 20000) insert into pages (body) select randomblob(3500) from s');
      expect(statSync(`${file}-wal`).size).toBeGreaterThan(WAL_SIZE_LIMIT_BYTES);
      raw.pragma('wal_checkpoint(PASSIVE)');
      raw.exec('insert into pages (body) values (randomblob(10))'); // the next commit rewinds the WAL
      expect(statSync(`${file}-wal`).size).toBeLessThanOrEqual(WAL_SIZE_LIMIT_BYTES);
    } finally {
      raw.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
