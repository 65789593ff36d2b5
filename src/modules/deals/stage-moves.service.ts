import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/database.js';
import { validationFailed, type FieldError } from '../../errors.js';
import type { Caller } from '../shared/caller.js';
import { checkCondition, type WriteOptions } from '../shared/precondition.js';
import { updateDeal } from './deals.service.js';
import { dealIdsInStage } from './deals.store.js';
import type { DealStage, PutDealStagesBody } from './stages.schemas.js';
import { checkStagesDocument, dealCount, lockDealStages, removedStagesInUse, saveDealStages } from './stages.service.js';

type Ctx = Pick<AppContext, 'database' | 'clock' | 'cipher' | 'blindIndex' | 'entityTagger'>;

/** What is wrong with `moveTo` for this change: each entry must move a removed stage into a kept one. */
function moveErrors(current: readonly DealStage[], stages: readonly DealStage[], moveTo: Record<string, string>, inUse: readonly [string, number][]): FieldError[] {
  const kept = new Set(stages.map((s) => s.key));
  const removed = new Set(current.map((s) => s.key).filter((key) => !kept.has(key)));
  const errors: FieldError[] = [];
  for (const [from, to] of Object.entries(moveTo)) {
    if (!removed.has(from)) errors.push({ field: `moveTo.${from}`, code: 'invalid_value', message: `${from} is not a stage this change removes` });
    else if (!kept.has(to)) errors.push({ field: `moveTo.${from}`, code: 'invalid_value', message: `must be one of the new stages: ${[...kept].join(', ')}` });
  }
  for (const [key, n] of inUse) {
    if (!Object.hasOwn(moveTo, key)) {
      errors.push({ field: `moveTo.${key}`, code: 'in_use', message: `stage ${key} is still used by ${dealCount(n)}: name the stage they move to in moveTo.${key}` });
    }
  }
  return errors;
}

/**
 * PUT /deal-stages, in the caller's transaction: replaces the list (the console's rules: shape, unique keys,
 * an open stage, at most 50) and moves the deals of each removed stage, live and trashed (a deal restored later
 * lands in a stage that exists), to the stage `moveTo` names, each with its deal.stage_changed. Removing a stage deals are in without a `moveTo` entry is a 400 naming it.
 * `ifMatch` is compared with the tag of the list this change replaces, read under the stage lock (412 with it).
 */
export async function putDealStages(ctx: Ctx, trx: Executor, caller: Caller, body: PutDealStagesBody, opts: WriteOptions = {}): Promise<DealStage[]> {
  const stages = checkStagesDocument({ stages: body.stages });
  const moveTo = body.moveTo ?? {};
  const organizationId = caller.organizationId;
  const current = await lockDealStages(ctx, trx, organizationId);
  checkCondition(ctx, opts, 'stages', current);
  const inUse = await removedStagesInUse(trx, organizationId, current, stages);
  const errors = moveErrors(current, stages, moveTo, inUse);
  if (errors.length) throw validationFailed(errors);
  await saveDealStages(ctx, trx, organizationId, stages);
  for (const [from] of inUse) {
    for (const id of await dealIdsInStage(trx, organizationId, from)) await updateDeal(ctx, trx, caller, id, { stage: moveTo[from]! }, { formerStages: current }, 'any');
  }
  return stages;
}
