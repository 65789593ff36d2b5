import { Option, type Command } from 'commander';
import { SingleBar, Presets } from 'cli-progress';
import type { AppContext } from '../context.js';
import { AppError } from '../errors.js';
import { importCsv, type ImportAdapter, type ImportReport } from '../modules/import/csv-import.js';
import { accountImportAdapter } from '../modules/accounts/accounts.import.js';
import { dealImportAdapter } from '../modules/deals/deals.import.js';
import { leadImportAdapter } from '../modules/leads/leads.import.js';
import { recordImportAdapter } from '../modules/objects/records.import.js';
import { requireOrganization } from '../modules/orgs/orgs.service.js';
import { UPSERT_KEYS, type UpsertKey } from '../modules/shared/batch.schemas.js';
import { action } from './run.js';

/** One adapter per importable resource; `object` is the custom object's slug for records. */
const ADAPTERS: Record<string, (ctx: AppContext, opts: { org: string; object?: string }) => Promise<ImportAdapter>> = {
  leads: (ctx, opts) => leadImportAdapter(ctx, opts.org),
  accounts: (ctx, opts) => accountImportAdapter(ctx, opts.org),
  deals: (ctx, opts) => dealImportAdapter(ctx, opts.org),
  records: (ctx, opts) => recordImportAdapter(ctx, opts.org, opts.object),
};

export function registerImportCommands(program: Command): void {
  program
    .command('import')
    .description('Import a CSV file (header row = API field names) with the same validation, encryption, rules and events as the API')
    .argument('<resource>', `one of: ${Object.keys(ADAPTERS).join(', ')}`)
    .argument('<file>', 'CSV file')
    .requiredOption('--org <id>', 'organization id')
    .option('--object <slug>', 'custom object slug (records)')
    .option('--all-or-nothing', 'write nothing unless every row is valid', false)
    .addOption(
      new Option(
        '--upsert-by <key>',
        'update the item holding a row\'s key instead of creating one, as POST /{resource}/batch with upsertBy: externalId (every resource) or email (leads: the oldest live lead with it); an empty cell leaves its field as it is',
      ).choices(UPSERT_KEYS),
    )
    .action(action(async (ctx, out, resource: string, file: string, opts: { org: string; object?: string; allOrNothing: boolean; upsertBy?: UpsertKey }) => {
      const adapterOf = ADAPTERS[resource];
      if (!adapterOf) throw new AppError('VALIDATION_FAILED', `Unknown resource ${resource}; use one of: ${Object.keys(ADAPTERS).join(', ')}`);
      await requireOrganization(ctx, opts.org);
      const adapter = await adapterOf(ctx, opts);
      const bar = !out.json && process.stderr.isTTY ? new SingleBar({ format: 'importing {bar} {percentage}% | {value}/{total} KiB | {duration}s', stream: process.stderr }, Presets.shades_classic) : null;
      let started = false;
      const report = await importCsv(ctx, {
        file,
        organizationId: opts.org,
        adapter,
        allOrNothing: opts.allOrNothing,
        upsertBy: opts.upsertBy,
        onProgress: (read, total) => {
          if (!bar) return;
          if (!started) bar.start(Math.ceil(total / 1024), 0);
          started = true;
          bar.update(Math.ceil(read / 1024));
        },
      });
      bar?.stop();
      const lines = report.failed.slice(0, 50).map((f) => `  line ${f.line}: ${f.errors.map((e) => `${e.field} ${e.message}`).join('; ')}`);
      const more = report.failed.length > 50 ? [`  … and ${report.failed.length - 50} more (use --json for all)`] : [];
      out.print(report, [summary(report, resource), ...lines, ...more].join('\n'));
      if (report.failed.length > 0) process.exitCode = 2;
    }));
}

/** The report's first line: rows written (with --upsert-by, how many were created, updated, unchanged), the rate, rows refused. */
function summary(report: ImportReport, resource: string): string {
  const rate = report.seconds > 0 ? Math.round(report.imported / report.seconds) : report.imported;
  const refused = `${report.failed.length} row(s) refused${report.allOrNothing && report.failed.length ? ', so nothing was written (--all-or-nothing)' : ''}`;
  const timing = `in ${report.seconds.toFixed(2)} s (${rate} rows/s)`;
  if (!report.upsert) return `Imported ${report.imported} of ${report.rows} ${resource} ${timing}; ${refused}`;
  const { by, created, updated, unchanged } = report.upsert;
  return `Upserted ${report.imported} of ${report.rows} ${resource} by ${by} ${timing}: ${created} created, ${updated} updated, ${unchanged} unchanged; ${refused}`;
}
