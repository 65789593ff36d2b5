import { existsSync, renameSync, rmSync, statSync } from 'node:fs';
import SqliteDatabase from 'better-sqlite3';
import type { Config } from '../config.js';
import { openSqlite } from './database.js';

export class BackupError extends Error {}

/** The SQLite file to back up or restore; PostgreSQL has its own tools for that. */
export function sqliteFileOf(database: Config['database']): string {
  if (database.dialect !== 'sqlite') {
    throw new BackupError('crm backup/restore handle the SQLite database; for PostgreSQL use pg_dump / pg_restore (see docs/operations.md)');
  }
  return database.url;
}

const SIDE_FILES = ['-wal', '-shm'];

/** `ok`, or what SQLite's integrity check found wrong (or why the file is not a database at all). */
export function integrityOf(file: string): string {
  let db: SqliteDatabase.Database | undefined;
  try {
    db = new SqliteDatabase(file, { readonly: true, fileMustExist: true });
    const rows = db.pragma('integrity_check') as { integrity_check: string }[];
    const result = rows.map((r) => r.integrity_check).join('; ');
    if (result !== 'ok') return result;
    const migrated = db.prepare(`select count(*) as n from sqlite_master where type = 'table' and name = 'kysely_migration'`).get() as { n: number };
    return migrated.n === 1 ? 'ok' : 'not a CRM database (no migrations table)';
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  } finally {
    db?.close();
  }
}

/**
 * True when another connection has the database open (a running `crm serve`, a worker): taking SQLite's
 * exclusive lock fails while any other connection holds even an idle WAL read lock.
 */
export function isInUse(file: string): boolean {
  if (!existsSync(file)) return false;
  const db = new SqliteDatabase(file, { timeout: 0 });
  try {
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('begin exclusive');
    db.exec('commit');
    return false;
  } catch (err) {
    if ((err as { code?: string }).code === 'SQLITE_BUSY') return true;
    throw err;
  } finally {
    db.close();
  }
}

/**
 * Online, consistent copy of a live database: VACUUM INTO reads one snapshot inside a single read
 * transaction, so writers (in this or other processes) carry on and the copy holds exactly the committed
 * state at one instant — never half a transaction. The copy is written beside the target and renamed
 * into place once verified, so a failed backup never leaves a truncated file under the final name.
 */
export function backupSqlite(dbFile: string, outFile: string, opts: { force?: boolean } = {}): { bytes: number } {
  if (!existsSync(dbFile)) throw new BackupError(`No database at ${dbFile}`);
  if (existsSync(outFile) && !opts.force) throw new BackupError(`${outFile} exists; pass --force to replace it`);
  const partial = `${outFile}.partial`;
  rmSync(partial, { force: true });
  const db = openSqlite(dbFile);
  try {
    db.prepare('vacuum into ?').run(partial);
  } finally {
    db.close();
  }
  const integrity = integrityOf(partial);
  if (integrity !== 'ok') {
    rmSync(partial, { force: true });
    throw new BackupError(`The backup failed its integrity check: ${integrity}`);
  }
  renameSync(partial, outFile);
  return { bytes: statSync(outFile).size };
}

/**
 * Replaces the database with a verified backup. Refuses while the database is open elsewhere (a server
 * would keep writing to the replaced file and lose those writes) unless forced. The replaced database is
 * kept beside it (`<file>.before-restore-<time>`), so a restore is itself undoable.
 */
export function restoreSqlite(fromFile: string, dbFile: string, opts: { force?: boolean; now?: Date } = {}): { keptAs: string | null } {
  const integrity = existsSync(fromFile) ? integrityOf(fromFile) : `no file at ${fromFile}`;
  if (integrity !== 'ok') throw new BackupError(`Refusing to restore ${fromFile}: ${integrity}`);
  if (!opts.force && isInUse(dbFile)) {
    throw new BackupError(`${dbFile} is in use (is crm serve or crm worker running?); stop it first, or pass --force`);
  }
  // A fresh single-file copy (the backup may itself be open, or carry a WAL): same snapshot rules as backup.
  const incoming = `${dbFile}.restoring`;
  rmSync(incoming, { force: true });
  const source = new SqliteDatabase(fromFile, { readonly: true, fileMustExist: true });
  try {
    source.prepare('vacuum into ?').run(incoming);
  } finally {
    source.close();
  }
  let keptAs: string | null = null;
  if (existsSync(dbFile)) {
    // Fold the WAL into the old file first, so the kept copy is complete on its own.
    const old = new SqliteDatabase(dbFile);
    try {
      old.pragma('wal_checkpoint(truncate)');
    } finally {
      old.close();
    }
    keptAs = `${dbFile}.before-restore-${(opts.now ?? new Date()).toISOString().replace(/[:.]/g, '-')}`;
    // The WAL and shared-memory files travel with their database: the kept copy stays whole (and a forced
    // restore under a running server leaves that server writing into the kept copy, not into nowhere).
    for (const suffix of ['', ...SIDE_FILES]) if (existsSync(dbFile + suffix)) renameSync(dbFile + suffix, keptAs + suffix);
  }
  renameSync(incoming, dbFile);
  const after = integrityOf(dbFile);
  if (after !== 'ok') throw new BackupError(`The restored database failed its integrity check: ${after}`);
  return { keptAs };
}
