import type { AppContext } from '../../context.js';
import type { ImportAdapter } from '../import/csv-import.js';
import { CreateLeadBody } from './leads.schemas.js';
import { createLeads } from './leads.service.js';

/** `crm import leads`: CSV columns are the API's field names; every cell of a lead is text. */
export function leadImportAdapter(ctx: AppContext): ImportAdapter {
  return {
    resource: 'leads',
    schema: CreateLeadBody,
    fromCsv: (cells) => cells,
    createMany: (trx, caller, inputs) => createLeads(ctx, trx, caller, inputs as CreateLeadBody[]),
  };
}
