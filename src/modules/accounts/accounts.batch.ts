import type { AppContext } from '../../context.js';
import { customFieldCheck } from '../fields/custom-fields.service.js';
import { keyedByExternalId, type BatchResource } from '../shared/batch.service.js';
import { CreateAccountBody, UpdateAccountBody, type Account } from './accounts.schemas.js';
import { createAccount, findLiveAccount, updateAccount } from './accounts.service.js';

/** Accounts in the batch runner (POST and PATCH /accounts/batch, `crm import accounts --upsert-by`): upserts by external id. */
export function accountBatch(ctx: AppContext): BatchResource<Account, unknown> {
  return {
    noun: 'account',
    label: 'Account',
    ...keyedByExternalId('accounts'),
    createSchema: CreateAccountBody,
    openFieldChecks: (db, caller) => customFieldCheck(ctx, db, caller.organizationId, 'accounts'),
    updateSchema: UpdateAccountBody,
    find: (db, caller, _params, id) => findLiveAccount(ctx, db, caller.organizationId, id),
    create: (trx, caller, _params, input, opts) => createAccount(ctx, trx, caller, input as CreateAccountBody, opts),
    update: (trx, caller, _params, id, patch, opts) => updateAccount(ctx, trx, caller, id, patch as UpdateAccountBody, opts),
  };
}
