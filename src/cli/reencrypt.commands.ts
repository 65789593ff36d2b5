import type { Command } from 'commander';
import { ENCRYPTED_COLUMNS } from '../modules/shared/encrypted-columns.js';
import { reencryptColumns } from '../crypto/reencrypt.js';
import { action } from './run.js';

/** Key rotation, step two: re-seal everything with the new ENCRYPTION_KEY so the old one can be retired. */
export function registerReencryptCommand(program: Command): void {
  program
    .command('reencrypt')
    .description('Re-encrypt every encrypted column with the current ENCRYPTION_KEY (online, in batches)')
    .option('--batch-size <n>', 'rows per transaction', '500')
    .option('--pause-ms <n>', 'pause between batches, to leave the database to live traffic', '0')
    .option('--dry-run', 'only count values sealed with a retired key', false)
    .action(action(async (ctx, out, opts: { batchSize: string; pauseMs: string; dryRun: boolean }) => {
      const reports = await reencryptColumns(ctx.database.db, ctx.cipher, ENCRYPTED_COLUMNS, {
        batchSize: Number(opts.batchSize),
        pauseMs: Number(opts.pauseMs),
        dryRun: opts.dryRun,
      });
      const failed = reports.reduce((n, r) => n + r.failed, 0);
      const lines = reports.map((r) => `${r.column}: ${r.stale} stale, ${r.rewritten} re-encrypted${r.failed ? `, ${r.failed} FAILED` : ''}`);
      const verdict = opts.dryRun
        ? 'Dry run: nothing written.'
        : failed
          ? 'Some values could not be decrypted with any configured key: keep the retired keys until they are resolved.'
          : 'Done: every value is sealed with the current key; the retired keys can be removed from ENCRYPTION_KEYS_RETIRED.';
      out.print({ columns: reports, failed, dryRun: opts.dryRun }, [...lines, verdict].join('\n'));
      if (failed) process.exitCode = 1;
    }));
}
