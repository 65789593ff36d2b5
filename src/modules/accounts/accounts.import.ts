import type { AppContext } from '../../context.js';
import { customColumnsOf } from '../fields/custom-fields.service.js';
import { oneByOne, type ImportAdapter } from '../import/csv-import.js';
import { CreateAccountBody } from './accounts.schemas.js';
import { createAccount } from './accounts.service.js';
import { externalIdKeys } from '../shared/external-id.js';
import { accountBatch } from './accounts.batch.js';

/**
 * `crm import accounts`: CSV columns are the API's field names and custom field keys; each row is created by the API's
 * service, or upserted by the batch runner of POST /accounts/batch (`--upsert-by externalId`).
 */
export async function accountImportAdapter(ctx: AppContext, organizationId: string): Promise<ImportAdapter> {
  return {
    resource: 'accounts',
    schema: CreateAccountBody,
    rows: { kind: 'accounts', custom: await customColumnsOf(ctx, organizationId, 'accounts') },
    createMany: oneByOne<CreateAccountBody>(
      (caller, inputs) => externalIdKeys('accounts', caller.organizationId, inputs),
      (trx, caller, input, opts) => createAccount(ctx, trx, caller, input, opts),
    ),
    batch: { resource: accountBatch(ctx), params: {} },
  };
}
