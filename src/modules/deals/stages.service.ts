import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/database.js';
import { AppError, notFound, validationFailed, type FieldError } from '../../errors.js';
import { validateValue } from '../../http/validation.js';
import { findOrganization } from '../orgs/orgs.store.js';
import { checkCondition, type WriteOptions } from '../shared/precondition.js';
import { countDealsByStage } from './deals.store.js';
import { DealStagesDocument, type DealStage } from './stages.schemas.js';
import { loadStages, lockStages, saveStages } from './stages.store.js';

/** Used by every organization until it sets its own list. */
export const DEFAULT_DEAL_STAGES: readonly DealStage[] = Object.freeze([
  { key: 'qualification', label: 'Qualification', kind: 'open' },
  { key: 'proposal', label: 'Proposal', kind: 'open' },
  { key: 'negotiation', label: 'Negotiation', kind: 'open' },
  { key: 'won', label: 'Won', kind: 'won' },
  { key: 'lost', label: 'Lost', kind: 'lost' },
]);

/** The stages in force for the organization (not checked to exist: callers are authenticated into it). */
export async function getDealStages(db: Executor, organizationId: string): Promise<DealStage[]> {
  return (await loadStages(db, organizationId)) ?? DEFAULT_DEAL_STAGES.map((s) => ({ ...s }));
}

/** The field error for a stage that is not one of the organization's; the message names the allowed keys. */
export function unknownStage(field: string, stages: readonly DealStage[]): FieldError {
  return { field, code: 'invalid_value', message: `must be one of this organization's stages: ${stages.map((s) => s.key).join(', ')}` };
}

/** A stages document (`{stages}`, in pipeline order) checked whole: shape, unique keys, an open stage. */
export function checkStagesDocument(input: unknown): DealStage[] {
  const shapeErrors = validateValue(DealStagesDocument, input, 'stages');
  if (shapeErrors.length) throw validationFailed(shapeErrors);
  const { stages } = input as DealStagesDocument;
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  for (const [i, stage] of stages.entries()) {
    if (seen.has(stage.key)) errors.push({ field: `stages.${i}.key`, code: 'duplicate', message: `stage key ${stage.key} is used twice` });
    seen.add(stage.key);
  }
  if (!stages.some((s) => s.kind === 'open')) {
    errors.push({ field: 'stages', code: 'no_open_stage', message: 'must contain at least one stage of kind open' });
  }
  if (errors.length) throw validationFailed(errors);
  return stages.map((s) => ({ key: s.key, label: s.label.trim(), kind: s.kind }));
}

export const dealCount = (n: number) => `${n} deal${n === 1 ? '' : 's'}`;

/**
 * Inside the caller's transaction: locks the stage list against deal writes and other stage changes, and answers
 * it. What the change then compares (an If-Match) and counts is the list it replaces.
 */
export async function lockDealStages(ctx: Pick<AppContext, 'database'>, trx: Executor, organizationId: string): Promise<DealStage[]> {
  await lockStages(trx, ctx.database.dialect, organizationId, 'change');
  return getDealStages(trx, organizationId);
}

/** Of the stages `current` has and the new list drops, those live or trashed deals are still in (with their counts). */
export async function removedStagesInUse(trx: Executor, organizationId: string, current: readonly DealStage[], stages: readonly DealStage[]): Promise<[string, number][]> {
  const kept = new Set(stages.map((s) => s.key));
  const removed = current.map((s) => s.key).filter((key) => !kept.has(key));
  return [...(await countDealsByStage(trx, organizationId, removed, 'any'))].filter(([, n]) => n > 0);
}

/** The stage list replaced in the caller's transaction (order matters: the first is a new deal's default). */
export async function saveDealStages(ctx: Pick<AppContext, 'clock'>, trx: Executor, organizationId: string, stages: DealStage[]): Promise<void> {
  await saveStages(trx, organizationId, stages, ctx.clock.now().toISOString());
}

/**
 * The console's replacement of an organization's deal stages. It has no way to say where deals go, so dropping a
 * stage that deals are still in is a CONFLICT naming each stage and its count (PUT /deal-stages moves them
 * instead: stage-moves.service.ts). `ifMatch` is compared, as PUT /deal-stages does, with the tag of the list this
 * change replaces, read under the stage lock (412 with it), so a list changed meanwhile isn't overwritten.
 */
export async function setDealStages(ctx: Pick<AppContext, 'database' | 'clock' | 'entityTagger'>, organizationId: string, input: unknown, opts: WriteOptions = {}): Promise<DealStage[]> {
  const stages = checkStagesDocument(input);
  if (!(await findOrganization(ctx.database.db, organizationId))) throw notFound('Organization');
  // No events to dispatch, so not inTransaction; but the database's own transaction (SQLite's group commit).
  return ctx.database.transaction(async (trx) => {
    const current = await lockDealStages(ctx, trx, organizationId);
    checkCondition(ctx, opts, 'stages', current);
    const inUse = await removedStagesInUse(trx, organizationId, current, stages);
    if (inUse.length) {
      // Trashed deals hold their stage too (one restored later must land in a stage that exists); say how many.
      const trashed = await countDealsByStage(trx, organizationId, inUse.map(([key]) => key), 'trash');
      const used = (key: string, n: number) => `${dealCount(n)}${trashed.get(key) ? `, ${trashed.get(key)} of them in the trash` : ''}`;
      const errors = inUse.map(([key, n]) => ({ field: 'stages', code: 'in_use', message: `stage ${key} is still used by ${used(key, n)}` }));
      const list = inUse.map(([key, n]) => `${key} (${used(key, n)})`).join(', ');
      const inTrash = trashed.size ? ' A deal in the trash counts until it is purged: restore it from the Deals trash and move it, or delete it for good ("Delete for good" on the Deals trash page of the console, or DELETE /deals/{id}?permanent=true).' : '';
      throw new AppError('CONFLICT', `Can't remove stages still used by deals: ${list}. Move those deals to another stage first.${inTrash}`, { errors });
    }
    await saveDealStages(ctx, trx, organizationId, stages);
    return stages;
  });
}
