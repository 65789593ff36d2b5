import type { ImportAdapter } from '../import/csv-import.js';
import { CreateLeadBody } from './leads.schemas.js';
import { storeNewLeads } from './leads.service.js';
import type { NewLead } from './new-lead.js';

/**
 * `crm import leads`: CSV columns are the API's field names. The worker thread validates each row and seals
 * its contact fields (see row-preparers.ts); here the sealed leads are stored with the API's duplicate
 * detection, assignment rules and events.
 */
export function leadImportAdapter(): ImportAdapter {
  return {
    resource: 'leads',
    // Strict: a column that names no field is refused (custom fields are not imported yet).
    schema: { ...CreateLeadBody, additionalProperties: false },
    rows: { kind: 'leads' },
    createMany: (trx, caller, items, now) => storeNewLeads(trx, caller, items as NewLead[], now),
  };
}
