import type { Command } from 'commander';
import { validationFailed } from '../errors.js';
import { validateValue } from '../http/validation.js';
import { plural } from '../lib/plural.js';
import { requireOrganization } from '../modules/orgs/orgs.service.js';
import { ErasureBody } from '../modules/privacy/privacy.schemas.js';
import { eraseSubject } from '../modules/privacy/privacy.service.js';
import { action, CLI_ACTOR } from './run.js';

export function registerPrivacyCommands(program: Command): void {
  program
    .command('erase')
    .description('Erase a data subject for good: every lead, account, deal and record holding the e-mail or phone (docs/privacy.md)')
    .requiredOption('--org <id>', 'organization id')
    .option('--email <email>', 'the e-mail to erase')
    .option('--phone <phone>', 'the phone to erase, international format')
    .option('--reason <text>', 'kept with the receipt (no personal data)')
    .action(action(async (ctx, out, opts: { org: string; email?: string; phone?: string; reason?: string }) => {
      const body = {
        ...(opts.email !== undefined ? { email: opts.email } : {}),
        ...(opts.phone !== undefined ? { phoneNumber: opts.phone } : {}),
        ...(opts.reason !== undefined ? { reason: opts.reason } : {}),
      };
      const errors = validateValue(ErasureBody, body, 'body');
      if (errors.length) throw validationFailed(errors);
      await requireOrganization(ctx, opts.org);
      const erasure = await eraseSubject(ctx, { organizationId: opts.org, actor: CLI_ACTOR }, body);
      const { leads, accounts, deals, records } = erasure.matched;
      out.print(erasure, `Erasure ${erasure.id} completed: ${plural(leads, 'lead')}, ${plural(accounts, 'account')}, ${plural(deals, 'deal')}, ${plural(records, 'record')} removed`);
    }));
}
