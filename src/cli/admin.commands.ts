import type { Command } from 'commander';
import { createSetupToken, setupLinkUrl } from '../admin/auth/setup.service.js';
import { action } from './run.js';

export function registerAdminCommands(program: Command): void {
  program
    .command('admin')
    .description('Admin console')
    .command('setup-link')
    .description('Print a one-time link (valid 24 h) to create the first administrator of an organization')
    .requiredOption('--org <id>', 'organization id (it must have no administrator yet)')
    .option('--base-url <url>', 'where the console is reached, e.g. https://crm.example.com (default: where crm serve listens with this PORT, HOST and TLS_* configuration)')
    .action(action(async (ctx, out, opts: { org: string; baseUrl?: string }) => {
      const { token, expiresAt } = await createSetupToken(ctx, opts.org);
      const url = setupLinkUrl(ctx.config, token, opts.baseUrl);
      out.print({ url, expiresAt }, `Open this link to create the first administrator (works once, until ${expiresAt}):\n${url}`);
    }));
}
