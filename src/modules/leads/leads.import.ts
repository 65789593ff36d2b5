import type { AppContext } from '../../context.js';
import { customColumnsOf } from '../fields/custom-fields.service.js';
import type { ImportAdapter } from '../import/csv-import.js';
import { CreateLeadBody } from './leads.schemas.js';
import { leadBatch, leadSealThread } from './leads.batch.js';
import { storeNewLeads } from './leads.service.js';
import type { NewLead } from './new-lead.js';

/**
 * `crm import leads`: CSV columns are the API's field names and the keys of the organization's custom lead
 * fields. The worker thread validates each row and seals its contact fields and custom values (see
 * row-preparers.ts); here the sealed leads are stored with the API's duplicate detection, assignment rules,
 * custom value index and events. With `--upsert-by` the rows go through the batch runner of POST /leads/batch
 * instead, which prepares the leads it creates in its transaction (its seal thread is never started).
 */
export async function leadImportAdapter(ctx: AppContext, organizationId: string): Promise<ImportAdapter> {
  return {
    resource: 'leads',
    schema: CreateLeadBody,
    rows: { kind: 'leads', custom: await customColumnsOf(ctx, organizationId, 'leads') },
    createMany: (trx, caller, items, now) => storeNewLeads(trx, caller, items as NewLead[], now),
    batch: { resource: leadBatch(ctx, leadSealThread(ctx)), params: {} },
  };
}
