import type { Command } from 'commander';
import { notFound } from '../errors.js';
import { findOrganization } from '../modules/orgs/orgs.store.js';
import { purgeExpiredTrash } from '../modules/shared/trash-purge.service.js';
import { action } from './run.js';

/** `crm trash purge`: the scheduler's purge of expired trash, now (e.g. after lowering TRASH_RETENTION_DAYS). */
export function registerTrashCommands(program: Command): void {
  program
    .command('trash')
    .description('The trash of deleted leads, accounts, deals, records, notes and tasks')
    .command('purge')
    .description('Remove for good, now, every item deleted longer ago than TRASH_RETENTION_DAYS (the scheduler does it hourly)')
    .option('--org <id>', 'only this organization')
    .action(action(async (ctx, out, opts: { org?: string }) => {
      if (opts.org !== undefined && !(await findOrganization(ctx.database.db, opts.org))) throw notFound('Organization');
      const purged = await purgeExpiredTrash(ctx, opts.org);
      out.print({ purged }, `Removed ${purged} item(s) deleted more than ${ctx.config.trashRetentionDays} days ago.`);
    }));
}
