import { inTransaction } from '../../../db/transaction.js';
import { CreateAccountBody, ListAccountsQuery, UpdateAccountBody } from '../../accounts/accounts.schemas.js';
import { createAccount, deleteAccount, getAccount, listAccounts, restoreAccount, updateAccount } from '../../accounts/accounts.service.js';
import { defineCreateTool, defineTool, deleteDescription, DeleteInput, GetInput, UpdateInput, customFieldErrors, customChangeErrors, withJsonFilters , RestoreInput, restoreDescription } from '../mcp.tool.js';

export const accountTools = [
  defineTool({
    name: 'search_accounts',
    title: 'Search accounts',
    description:
      'Find accounts (companies), newest first. `q` is matched exactly when it is an e-mail address or a phone number with its country code, otherwise as a case-insensitive substring of the name; omit it to list all; `ownerId` keeps the accounts of one owner. `sort` orders the list (default `-createdAt`, newest first; also createdAt, updatedAt, -updatedAt, name, -name); `createdAfter`/`createdBefore`/`updatedAfter`/`updatedBefore` take ISO instants. Paged with `limit` (max 100): pass `pagination.nextCursor` back as `after` for the next page (null on the last). Custom fields filter with `filter[<key>]` (equality) and `filter[<key>][gte|lte|gt|lt]` (number, date, datetime), as for records.',
    customFields: { resource: 'accounts', at: 'filters' },
    scopes: ['accounts:read'],
    readOnly: true,
    input: withJsonFilters(ListAccountsQuery),
    run: ({ ctx, organizationId }, input) => listAccounts(ctx, organizationId, input),
  }),
  defineTool({
    name: 'get_account',
    title: 'Get an account',
    description: 'One account by id, with its domain, contact details, industry and owner.',
    scopes: ['accounts:read'],
    readOnly: true,
    input: GetInput('Account'),
    etag: 'account',
    run: async ({ ctx, organizationId }, { id }) => ({ account: await getAccount(ctx, organizationId, id) }),
  }),
  defineCreateTool({
    name: 'create_account',
    title: 'Create an account',
    description: 'Create an account (a company). Only `name` is required. Search first to avoid creating a duplicate. The organization\'s custom account fields (describe_object with object `accounts`) go beside the standard ones, by key.',
    customFields: { resource: 'accounts', at: 'body' },
    scopes: ['accounts:write'],
    input: CreateAccountBody,
    openFieldErrors: customFieldErrors('accounts'),
    rest: (input) => ({ path: '/accounts', body: input }),
    create: async ({ ctx, caller }, trx, input) => ({ account: await createAccount(ctx, trx, caller, input) }),
  }),
  defineTool({
    name: 'update_account',
    title: 'Update an account',
    description: 'Change some fields of an account: only the fields in `changes` are written; null clears an optional field. Custom account fields (describe_object with object `accounts`) are changed the same way.',
    customFields: { resource: 'accounts', at: 'changes' },
    bodyAt: 'changes',
    scopes: ['accounts:write'],
    readOnly: false,
    input: UpdateInput('Account', UpdateAccountBody),
    etag: 'account',
    openFieldErrors: customChangeErrors('accounts'),
    run: async ({ ctx, caller }, { id, changes, ifMatch }) => ({ account: await inTransaction(ctx, (trx) => updateAccount(ctx, trx, caller, id, changes, { ifMatch })) }),
  }),
  defineTool({
    name: 'delete_account',
    title: 'Delete an account',
    description: deleteDescription('account'),
    scopes: ['accounts:write'],
    readOnly: false,
    destructive: true,
    input: DeleteInput('Account'),
    etag: 'account',
    run: async ({ ctx, caller }, { id, permanent, ifMatch }) => ({ account: await inTransaction(ctx, (trx) => deleteAccount(ctx, trx, caller, id, permanent === true, { ifMatch })) }),
  }),
  defineTool({
    name: 'restore_account',
    title: 'Restore a account',
    description: restoreDescription('account', 'search_accounts'),
    scopes: ['accounts:write'],
    readOnly: false,
    input: RestoreInput('Account'),
    etag: 'account',
    run: async ({ ctx, caller }, { id, ifMatch }) => ({ account: await inTransaction(ctx, (trx) => restoreAccount(ctx, trx, caller, id, { ifMatch })) }),
  }),
];
