import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { inTransaction } from '../db/transaction.js';
import { AppError, notFound, validationFailed } from '../errors.js';
import { validateValue } from '../http/validation.js';
import { findOrganization } from '../modules/orgs/orgs.store.js';
import { getDealStages } from '../modules/deals/stages.service.js';
import { PutDealStagesBody, type DealStage } from '../modules/deals/stages.schemas.js';
import { putDealStages } from '../modules/deals/stage-moves.service.js';
import { action, CLI_ACTOR } from './run.js';

const describe = (stages: DealStage[]) => stages.map((s, i) => `${i + 1}. ${s.key}  ${s.label}  (${s.kind})`).join('\n');

function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new AppError('VALIDATION_FAILED', `${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

export function registerDealCommands(program: Command): void {
  const stages = program.command('stages').description('Deal stages of an organization');
  stages
    .command('set')
    .description('Replace the deal stages of an organization from a JSON file, as PUT /deal-stages: a removed stage that deals are in needs a moveTo entry')
    .requiredOption('--org <id>', 'organization id')
    .requiredOption('--file <path>', 'stages.json: {"stages": [{"key": "qualification", "label": "Qualification", "kind": "open"}, …], "moveTo"?: {"<removed>": "<kept>"}} in pipeline order')
    .action(action(async (ctx, out, opts: { org: string; file: string }) => {
      const body = readJson(opts.file);
      const errors = validateValue(PutDealStagesBody, body, 'stages');
      if (errors.length) throw validationFailed(errors);
      if (!(await findOrganization(ctx.database.db, opts.org))) throw notFound('Organization');
      const caller = { organizationId: opts.org, actor: CLI_ACTOR };
      const saved = await inTransaction(ctx, (trx) => putDealStages(ctx, trx, caller, body as PutDealStagesBody));
      out.print({ stages: saved }, `Saved ${saved.length} deal stage(s):\n${describe(saved)}`);
    }));
  stages
    .command('list')
    .description('Show the deal stages of an organization (the defaults until set)')
    .requiredOption('--org <id>', 'organization id')
    .action(action(async (ctx, out, opts: { org: string }) => {
      if (!(await findOrganization(ctx.database.db, opts.org))) throw notFound('Organization');
      const current = await getDealStages(ctx.database.db, opts.org);
      out.print({ stages: current }, describe(current));
    }));
}
