import type { AppContext } from '../../context.js';
import { customColumnsOf } from '../fields/custom-fields.service.js';
import { oneByOne, type ImportAdapter } from '../import/csv-import.js';
import { CreateDealBody } from './deals.schemas.js';
import { createDeal } from './deals.service.js';
import { externalIdKeys } from '../shared/external-id.js';
import { dealBatch } from './deals.batch.js';

/**
 * `crm import deals`: CSV columns are the API's field names (`amount` stays a decimal string, exact) and custom
 * field keys; each row is created by the API's service, or upserted by the batch runner of POST /deals/batch
 * (`--upsert-by externalId`).
 */
export async function dealImportAdapter(ctx: AppContext, organizationId: string): Promise<ImportAdapter> {
  return {
    resource: 'deals',
    schema: CreateDealBody,
    rows: { kind: 'deals', custom: await customColumnsOf(ctx, organizationId, 'deals') },
    createMany: oneByOne<CreateDealBody>(
      (caller, inputs) => externalIdKeys('deals', caller.organizationId, inputs),
      (trx, caller, input, opts) => createDeal(ctx, trx, caller, input, opts),
    ),
    batch: { resource: dealBatch(ctx), params: {} },
  };
}
