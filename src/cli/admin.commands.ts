import type { Command } from 'commander';
import { createSetupToken } from '../admin/auth/setup.service.js';
import { action } from './run.js';

export function registerAdminCommands(program: Command): void {
  program
    .command('admin')
    .description('Admin console')
    .command('setup-link')
    .description('Print a one-time link (valid 24 h) to create the first administrator of an organization')
    .requiredOption('--org <id>', 'organization id (it must have no administrator yet)')
    .option('--base-url <url>', 'where the console is reached, e.g. https://crm.example.com (default: http://HOST:PORT)')
    .action(action(async (ctx, out, opts: { org: string; baseUrl?: string }) => {
      const { token, expiresAt } = await createSetupToken(ctx, opts.org);
      const base = (opts.baseUrl ?? `http://${ctx.config.host}:${ctx.config.port}`).replace(/\/+$/, '');
      const url = `${base}/admin/setup?token=${token}`;
      out.print({ url, expiresAt }, `Open this link to create the first administrator (works once, until ${expiresAt}):\n${url}`);
    }));
}
