import type { Command } from 'commander';
import { AppError, validationFailed } from '../errors.js';
import { validateValue } from '../http/validation.js';
import { plural } from '../lib/plural.js';
import { requireOrganization } from '../modules/orgs/orgs.service.js';
import { ErasureBody } from '../modules/privacy/privacy.schemas.js';
import { eraseSubject } from '../modules/privacy/privacy.service.js';
import { action, CLI_ACTOR } from './run.js';

/** The body's fields as this command's flags, so that a message names what to type. */
const FLAGS: Readonly<Record<string, string>> = { email: '--email', phoneNumber: '--phone', reason: '--reason' };

async function namedByFlags<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof AppError && err.code === 'VALIDATION_FAILED' && err.errors) throw validationFailed(err.errors.map((e) => ({ ...e, field: FLAGS[e.field] ?? e.field })));
    throw err;
  }
}

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
      if (opts.email === undefined && opts.phone === undefined) throw validationFailed([{ field: '--email', code: 'required', message: 'is required, or --phone (give one or both)' }]);
      const erasure = await namedByFlags(async () => {
        const errors = validateValue(ErasureBody, body, 'body');
        if (errors.length) throw validationFailed(errors);
        await requireOrganization(ctx, opts.org);
        return eraseSubject(ctx, { organizationId: opts.org, actor: CLI_ACTOR }, body);
      });
      const { leads, accounts, deals, records } = erasure.matched;
      out.print(erasure, `Erasure ${erasure.id} completed: ${plural(leads, 'lead')}, ${plural(accounts, 'account')}, ${plural(deals, 'deal')}, ${plural(records, 'record')} removed`);
    }));
}
