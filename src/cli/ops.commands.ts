import type { Command } from 'commander';
import { loadDatabaseConfig } from '../config.js';
import { backupSqlite, restoreSqlite, sqliteFileOf } from '../db/backup.js';
import { bareAction } from './run.js';

const sqliteFile = () => sqliteFileOf(loadDatabaseConfig(process.env));

/** Backup and restore of the SQLite database (PostgreSQL has its own tools). */
export function registerOpsCommands(program: Command): void {
  program
    .command('backup')
    .description('Online, consistent copy of the SQLite database (the server may keep running)')
    .requiredOption('--out <file>', 'where to write the copy')
    .option('--force', 'replace an existing file', false)
    .action(bareAction((out, opts: { out: string; force: boolean }) => {
      const file = sqliteFile();
      const { bytes } = backupSqlite(file, opts.out, { force: opts.force });
      out.print({ file: opts.out, bytes }, `Backed up ${file} to ${opts.out} (${bytes} bytes, integrity ok). The encryption key is not in it: back it up separately.`);
    }));

  program
    .command('restore')
    .description('Replace the SQLite database with a verified backup (stop the server first)')
    .requiredOption('--from <file>', 'a file written by crm backup')
    .option('--force', 'restore even though the database is open by another process', false)
    .action(bareAction((out, opts: { from: string; force: boolean }) => {
      const file = sqliteFile();
      const { keptAs } = restoreSqlite(opts.from, file, { force: opts.force });
      out.print({ file, keptAs }, `Restored ${file} from ${opts.from} (integrity ok).${keptAs ? ` The previous database is kept as ${keptAs}.` : ''}`);
    }));
}
