import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/database.js';
import { externalIdHolders } from '../../db/external-ids.js';
import { inSavepoint } from '../../db/savepoint.js';
import { AppError, validationFailed } from '../../errors.js';
import { normalizeEmail } from '../../lib/contact.js';
import type { BatchResource } from '../shared/batch.service.js';
import type { Caller } from '../shared/caller.js';
import { externalIdTaken } from '../shared/external-id.js';
import { CreateLeadBody, UpdateLeadBody, type Lead } from './leads.schemas.js';
import { createLead, externalIdClashes, findLiveLead, prepareLeadsOf, referenceErrors, storePreparedLeads, updateLead } from './leads.service.js';
import { findOldestDuplicate } from './leads.store.js';
import { customFieldCheck } from '../fields/custom-fields.service.js';

type Ctx = Pick<AppContext, 'database' | 'cipher' | 'blindIndex' | 'clock'>;

/**
 * Many new leads in one go, for POST /leads/batch: each lead's references and external id are checked first
 * (three queries for the whole batch), then every lead that passed is stored with storeNewLeads (multi-row
 * statements: the bulk path of `crm import`), in a savepoint. Should that still fail for one of them (another
 * writer took an external id meanwhile, on PostgreSQL), they are created one by one, each in its own savepoint.
 */
async function createLeads(ctx: Ctx, trx: Executor, caller: Caller, inputs: CreateLeadBody[]): Promise<(Lead | AppError)[]> {
  const organizationId = caller.organizationId;
  const outcomes: (Lead | AppError | undefined)[] = (await referenceErrors(trx, organizationId, inputs)).map((errors) => (errors.length ? validationFailed(errors) : undefined));
  const clashes = await externalIdClashes(trx, organizationId, inputs.map((input, i) => (outcomes[i] === undefined ? input : {})));
  clashes.forEach((taken, i) => {
    if (taken) outcomes[i] = externalIdTaken('lead');
  });
  const pending = inputs.flatMap((input, i) => (outcomes[i] === undefined ? [i] : []));
  try {
    // A bad custom value throws here for the whole lot: the one-by-one path below then reports it per item.
    const prepared = await prepareLeadsOf(ctx, trx, organizationId, pending.map((i) => inputs[i]!));
    const leads = await inSavepoint(trx, () => storePreparedLeads(trx, caller, prepared));
    pending.forEach((i, k) => (outcomes[i] = leads[k]!));
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    for (const i of pending) outcomes[i] = await inSavepoint(trx, () => createLead(ctx, trx, caller, inputs[i]!)).catch((e: unknown) => asItemError(e));
  }
  return outcomes as (Lead | AppError)[];
}

function asItemError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  throw err;
}

/** Leads in the batch runner: upserts by e-mail (the duplicate rule: the oldest live lead) or by external id. */
export function leadBatch(ctx: Ctx & Pick<AppContext, 'outbox'>): BatchResource<Lead, unknown> {
  return {
    noun: 'lead',
    label: 'Lead',
    createSchema: CreateLeadBody,
    updateSchema: UpdateLeadBody,
    openFieldChecks: (db, caller) => customFieldCheck(ctx, db, caller.organizationId, 'leads'),
    find: (db, caller, _params, id) => findLiveLead(ctx, db, caller.organizationId, id),
    create: (trx, caller, _params, input) => createLead(ctx, trx, caller, input as CreateLeadBody),
    update: (trx, caller, _params, id, patch) => updateLead(ctx, trx, caller, id, patch as UpdateLeadBody),
    createMany: (trx, caller, _params, inputs) => createLeads(ctx, trx, caller, inputs as CreateLeadBody[]),
    async holderOf(db, caller, _params, by, value) {
      if (by === 'externalId') return (await externalIdHolders(db, 'leads', { column: 'organization_id', value: caller.organizationId }, [value])).get(value);
      const emailBidx = ctx.blindIndex.compute('email', caller.organizationId, normalizeEmail(value));
      const id = await findOldestDuplicate(db, caller.organizationId, { emailBidx, phoneBidx: null });
      return id === null ? undefined : { id, trashed: false };
    },
  };
}
