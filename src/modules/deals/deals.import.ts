import type { AppContext } from '../../context.js';
import { oneByOne, type ImportAdapter } from '../import/csv-import.js';
import { CreateDealBody } from './deals.schemas.js';
import { createDeal } from './deals.service.js';

/** `crm import deals`: CSV columns are the API's field names (`amount` stays a decimal string, exact); each row is created by the API's service. */
export function dealImportAdapter(ctx: AppContext): ImportAdapter {
  return {
    resource: 'deals',
    // Strict: a column that names no field is refused (custom fields are not imported yet).
    schema: { ...CreateDealBody, additionalProperties: false },
    rows: { kind: 'deals' },
    createMany: oneByOne((trx, caller, input: CreateDealBody) => createDeal(ctx, trx, caller, input)),
  };
}
