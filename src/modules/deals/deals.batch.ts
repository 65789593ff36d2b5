import type { AppContext } from '../../context.js';
import { customFieldCheck } from '../fields/custom-fields.service.js';
import { keyedByExternalId, type BatchResource } from '../shared/batch.service.js';
import { CreateDealBody, UpdateDealBody, type Deal } from './deals.schemas.js';
import { createDeal, findLiveDeal, updateDeal } from './deals.service.js';

/** Deals in the batch runner (POST and PATCH /deals/batch, `crm import deals --upsert-by`): upserts by external id. */
export function dealBatch(ctx: AppContext): BatchResource<Deal, unknown> {
  return {
    noun: 'deal',
    label: 'Deal',
    ...keyedByExternalId('deals'),
    createSchema: CreateDealBody,
    openFieldChecks: (db, caller) => customFieldCheck(ctx, db, caller.organizationId, 'deals'),
    updateSchema: UpdateDealBody,
    find: (db, caller, _params, id) => findLiveDeal(ctx, db, caller.organizationId, id),
    create: (trx, caller, _params, input, opts) => createDeal(ctx, trx, caller, input as CreateDealBody, opts),
    update: (trx, caller, _params, id, patch, opts) => updateDeal(ctx, trx, caller, id, patch as UpdateDealBody, opts),
  };
}
