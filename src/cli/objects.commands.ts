import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { inTransaction } from '../db/transaction.js';
import { validationFailed } from '../errors.js';
import { validateValue } from '../http/validation.js';
import { CreateObjectBody } from '../modules/objects/objects.schemas.js';
import { createObject } from '../modules/objects/objects.service.js';
import { requireOrganization } from '../modules/orgs/orgs.service.js';
import { action } from './run.js';

export function registerObjectCommands(program: Command): void {
  program
    .command('object')
    .description('Custom objects')
    .command('create')
    .description('Define a custom object from a JSON file (the body of POST /objects)')
    .requiredOption('--org <id>', 'organization id')
    .requiredOption('--file <path>', 'def.json: {"slug", "name", "fields": [{key, label, type, required?, options?, role?}], "stages": [{key, label}]}')
    .action(action(async (ctx, out, opts: { org: string; file: string }) => {
      const input: unknown = JSON.parse(readFileSync(opts.file, 'utf8'));
      // The same checks and defaults as the API body.
      const errors = validateValue(CreateObjectBody, input, 'body');
      if (errors.length) throw validationFailed(errors);
      await requireOrganization(ctx, opts.org);
      const object = await inTransaction(ctx, (trx) => createObject(ctx, trx, opts.org, input as CreateObjectBody));
      out.print(object, `Created object ${object.slug} (${object.fields.length} field(s), ${object.stages.length} stage(s))`);
    }));
}
