import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { AppContext } from '../context.js';
import { AppError, validationFailed } from '../errors.js';
import { ok } from '../http/schemas.js';
import { validateValue } from '../http/validation.js';
import { plural } from '../lib/plural.js';
import { requireOrganization } from '../modules/orgs/orgs.service.js';
import { ErasureBody, SubjectQuery } from '../modules/privacy/privacy.schemas.js';
import { eraseSubject } from '../modules/privacy/privacy.service.js';
import { exportSubject, type SubjectFile } from '../modules/privacy/subject-export.js';
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

/** The --email and --phone flags as the API's fields: one of them, or both. */
function subjectOf(opts: { email?: string; phone?: string }): { email?: string; phoneNumber?: string } {
  if (opts.email === undefined && opts.phone === undefined) throw validationFailed([{ field: '--email', code: 'required', message: 'is required, or --phone (give one or both)' }]);
  return { ...(opts.email !== undefined ? { email: opts.email } : {}), ...(opts.phone !== undefined ? { phoneNumber: opts.phone } : {}) };
}

/** Validates `value` with the route's schema, checks the organization, then runs the service, messages naming the flags. */
function checked<T>(ctx: AppContext, schema: object, value: unknown, org: string, run: () => Promise<T>): Promise<T> {
  return namedByFlags(async () => {
    const errors = validateValue(schema, value, 'body');
    if (errors.length) throw validationFailed(errors);
    await requireOrganization(ctx, org);
    return run();
  });
}

/**
 * A new file holding the export, readable by its owner only: an existing file is never replaced (it may be
 * another person's export, or not an export at all).
 */
function writeNewFile(path: string, text: string): void {
  try {
    writeFileSync(path, text, { flag: 'wx', mode: 0o600 });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') throw new AppError('CONFLICT', `${path} exists: choose another name, or remove it first`);
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new AppError('VALIDATION_FAILED', `can't create ${path}: its folder does not exist`);
    if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') throw new AppError('VALIDATION_FAILED', `can't create ${path}: no permission to write there`);
    throw err;
  }
}

const counts = (f: SubjectFile) => ({ leads: f.leads.length, accounts: f.accounts.length, deals: f.deals.length, records: f.records.length, notes: f.notes.length, tasks: f.tasks.length, events: f.events.length });

export function registerPrivacyCommands(program: Command): void {
  program
    .command('erase')
    .description('Erase a data subject for good: every lead, account, deal and record holding the e-mail or phone (docs/privacy.md)')
    .requiredOption('--org <id>', 'organization id')
    .option('--email <email>', 'the e-mail to erase')
    .option('--phone <phone>', 'the phone to erase, international format')
    .option('--reason <text>', 'kept with the receipt (no personal data)')
    .action(action(async (ctx, out, opts: { org: string; email?: string; phone?: string; reason?: string }) => {
      const body = { ...subjectOf(opts), ...(opts.reason !== undefined ? { reason: opts.reason } : {}) };
      const erasure = await checked(ctx, ErasureBody, body, opts.org, () => eraseSubject(ctx, { organizationId: opts.org, actor: CLI_ACTOR }, body));
      const { leads, accounts, deals, records } = erasure.matched;
      out.print(erasure, `Erasure ${erasure.id} completed: ${plural(leads, 'lead')}, ${plural(accounts, 'account')}, ${plural(deals, 'deal')}, ${plural(records, 'record')} removed`);
    }));

  program
    .command('export-subject')
    .description("Export a data subject (GDPR access request): the JSON GET /privacy/subject answers, on standard output or in a new file (docs/privacy.md)")
    .requiredOption('--org <id>', 'organization id')
    .option('--email <email>', 'the e-mail to export')
    .option('--phone <phone>', 'the phone to export, international format')
    .option('--out <file>', 'write a new file, readable by its owner only (mode 0600), instead; an existing one is refused')
    .action(action(async (ctx, out, opts: { org: string; email?: string; phone?: string; out?: string }) => {
      const query = subjectOf(opts);
      const file = await checked(ctx, SubjectQuery, query, opts.org, () => exportSubject(ctx, opts.org, query));
      const json = JSON.stringify(ok(file));
      if (opts.out === undefined) {
        console.log(json);
        return;
      }
      writeNewFile(opts.out, `${json}\n`);
      const n = counts(file);
      const items = [plural(n.leads, 'lead'), plural(n.accounts, 'account'), plural(n.deals, 'deal'), plural(n.records, 'record'), plural(n.notes, 'note'), plural(n.tasks, 'task'), plural(n.events, 'event')];
      out.print({ file: opts.out, ...n }, `Exported to ${opts.out}: ${items.join(', ')}`);
    }));
}
