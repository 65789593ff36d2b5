import type { Core } from '../core.js';
import { etagOf } from '../etag.js';
import type { CallOptions, CreateOptions, Query, RequestBody, ResponseData, Schema, FieldFilters, Written } from '../types.js';
import { listing } from './listing.js';
import { trashing } from './trash.js';
import { batching } from './batch.js';

const ACCOUNTS = '/api/public/v1/accounts';
const ACCOUNT = '/api/public/v1/accounts/{id}';
const RESTORE = '/api/public/v1/accounts/{id}/restore';
const BATCH = '/api/public/v1/accounts/batch';

export type Account = Schema<'Account'>;
export type AccountCreate = RequestBody<typeof ACCOUNTS, 'post'>;
export type AccountUpdate = RequestBody<typeof ACCOUNT, 'patch'>;
export type AccountQuery = Query<typeof ACCOUNTS, 'get'> & FieldFilters;
export type AccountPage = ResponseData<typeof ACCOUNTS, 'get'>;
export type AccountBatchItem = RequestBody<typeof BATCH, 'post'>['items'][number];
export type AccountBatchUpdate = RequestBody<typeof BATCH, 'patch'>['items'][number];
export type AccountBatchResult = ResponseData<typeof BATCH, 'post'>['results'][number];

export function accountsResource(core: Core) {
  return {
    create: async (body: AccountCreate, opts?: CreateOptions): Promise<Account> => (await core.create(ACCOUNTS, body, opts)).account,
    get: async (id: string, opts?: CallOptions): Promise<Account> => (await core.call(ACCOUNT, 'get', { params: { id } }, opts)).account,
    /** The current version, or undefined when `known` (as returned earlier) is still current (304, no body sent). */
    getIfChanged: async (known: Account, opts?: CallOptions): Promise<Account | undefined> =>
      (await core.call(ACCOUNT, 'get', { params: { id: known.id }, ifNoneMatch: etagOf(known) }, opts))?.account,
    update: async (id: string, patch: AccountUpdate, opts?: CallOptions): Promise<Written<Account>> => (await core.call(ACCOUNT, 'patch', { params: { id }, body: patch }, opts)).account,
    ...listing((query: AccountQuery, opts?: CallOptions) => core.call(ACCOUNTS, 'get', { query }, opts), (page) => page.accounts),
    ...batching<AccountBatchItem, AccountBatchUpdate, AccountBatchResult, 'externalId'>(
      async (body, opts) => (await core.create(BATCH, body, opts)).results,
      async (body, opts) => (await core.call(BATCH, 'patch', { body }, opts)).results,
    ),
    ...trashing<Written<Account>>(
      async (id, query, opts) => (await core.call(ACCOUNT, 'delete', { params: { id }, query }, opts)).account,
      async (id, opts) => (await core.call(RESTORE, 'post', { params: { id } }, opts)).account,
    ),
  };
}
