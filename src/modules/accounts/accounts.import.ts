import type { AppContext } from '../../context.js';
import { oneByOne, type ImportAdapter } from '../import/csv-import.js';
import { CreateAccountBody } from './accounts.schemas.js';
import { createAccount } from './accounts.service.js';

/** `crm import accounts`: CSV columns are the API's field names; each row is created by the API's service. */
export function accountImportAdapter(ctx: AppContext): ImportAdapter {
  return {
    resource: 'accounts',
    // Strict: a column that names no field is refused (custom fields are not imported yet).
    schema: { ...CreateAccountBody, additionalProperties: false },
    rows: { kind: 'accounts' },
    createMany: oneByOne((trx, caller, input: CreateAccountBody) => createAccount(ctx, trx, caller, input)),
  };
}
