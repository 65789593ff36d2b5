import type { AppContext } from '../../context.js';
import { oneByOne, type ImportAdapter } from '../import/csv-import.js';
import { CreateAccountBody } from './accounts.schemas.js';
import { createAccount } from './accounts.service.js';

/** `crm import accounts`: CSV columns are the API's field names; every cell is text. */
export function accountImportAdapter(ctx: AppContext): ImportAdapter {
  return {
    resource: 'accounts',
    schema: CreateAccountBody,
    fromCsv: (cells) => cells,
    createMany: oneByOne((trx, caller, input: CreateAccountBody) => createAccount(ctx, trx, caller, input)),
  };
}
