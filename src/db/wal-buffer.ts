import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import SqliteDatabase from 'better-sqlite3';

/**
 * Registers native/wal-buffer.c as SQLite's default VFS before this process opens a database file: a commit's WAL
 * frames then reach the kernel in a few writes of up to 124 KiB instead of two system calls per frame (a batch of
 * 100 new leads writes ~300 frames; see the C file for when the buffer is flushed and why that keeps every
 * reader's view and the crash guarantees as they were).
 *
 * The extension is built by `npm run build` (scripts/build-native.mjs). It is registered once per process (the
 * VFS list is SQLite's, shared by every thread); each thread's first call only finds it registered.
 */
const BUILT = [
  new URL('../../native/build/wal-buffer.so', import.meta.url),
  new URL('../../../native/build/wal-buffer.so', import.meta.url),
];

let registered: boolean | undefined;

/**
 * Registers the shim unless done already in this thread; false when the extension is not built (`npm run build`
 * found no C compiler): SQLite then works as it does without it, one system call a frame (the server warns).
 */
export function registerWalBuffer(): boolean {
  if (registered !== undefined) return registered;
  if (process.platform === 'win32' || !built()) return (registered = false);
  withExtension(() => undefined);
  return (registered = true);
}

const built = () => BUILT.find((url) => existsSync(url));

/**
 * In this process so far (tests, benchmarks): WAL writes SQLite asked for, writes passed on to the kernel, the bytes
 * SQLite asked to write to WALs (frame headers and pages), and the commits among them.
 */
export function walBufferStats(): { asked: number; written: number; bytes: number; commits: number } {
  return withExtension((db) => JSON.parse(db.prepare('select wal_buffer_stats() as s').pluck().get() as string));
}

function withExtension<T>(use: (db: SqliteDatabase.Database) => T): T {
  const found = built();
  if (!found) throw new Error('native/build/wal-buffer.so is missing: run `npm run build` (it needs a C compiler)');
  const db = new SqliteDatabase(':memory:');
  try {
    db.loadExtension(fileURLToPath(found)); // entry point from the name: sqlite3_walbuffer_init
    return use(db);
  } finally {
    db.close();
  }
}
