import type { Core } from '../core.js';
import { etagOf } from '../etag.js';
import type { CallOptions, CreateOptions, Query, RequestBody, ResponseData, Schema, FieldFilters, Written } from '../types.js';
import { listing } from './listing.js';
import { trashing } from './trash.js';
import { batching } from './batch.js';

const DEALS = '/api/public/v1/deals';
const DEAL = '/api/public/v1/deals/{id}';
const RESTORE = '/api/public/v1/deals/{id}/restore';
const BATCH = '/api/public/v1/deals/batch';
const STAGES = '/api/public/v1/deal-stages';

export type Deal = Schema<'Deal'>;
export type DealCreate = RequestBody<typeof DEALS, 'post'>;
export type DealUpdate = RequestBody<typeof DEAL, 'patch'>;
export type DealQuery = Query<typeof DEALS, 'get'> & FieldFilters;
export type DealPage = ResponseData<typeof DEALS, 'get'>;
export type DealBatchItem = RequestBody<typeof BATCH, 'post'>['items'][number];
export type DealBatchUpdate = RequestBody<typeof BATCH, 'patch'>['items'][number];
export type DealBatchResult = ResponseData<typeof BATCH, 'post'>['results'][number];
export type DealStage = ResponseData<typeof STAGES, 'get'>['stages'][number];

export function dealsResource(core: Core) {
  const update = async (id: string, patch: DealUpdate, opts?: CallOptions): Promise<Written<Deal>> => (await core.call(DEAL, 'patch', { params: { id }, body: patch }, opts)).deal;
  return {
    create: async (body: DealCreate, opts?: CreateOptions): Promise<Deal> => (await core.create(DEALS, body, opts)).deal,
    get: async (id: string, opts?: CallOptions): Promise<Deal> => (await core.call(DEAL, 'get', { params: { id } }, opts)).deal,
    /** The current version, or undefined when `known` (as returned earlier) is still current (304, no body sent). */
    getIfChanged: async (known: Deal, opts?: CallOptions): Promise<Deal | undefined> =>
      (await core.call(DEAL, 'get', { params: { id: known.id }, ifNoneMatch: etagOf(known) }, opts))?.deal,
    update,
    /** Moves the deal to another of the organization's stages (records deal.stage_changed). */
    moveStage: (id: string, stage: string, opts?: CallOptions): Promise<Written<Deal>> => update(id, { stage }, opts),
    /** The organization's stages in pipeline order. */
    stages: async (opts?: CallOptions): Promise<DealStage[]> => (await core.call(STAGES, 'get', {}, opts)).stages,
    ...listing((query: DealQuery, opts?: CallOptions) => core.call(DEALS, 'get', { query }, opts), (page) => page.deals),
    ...batching<DealBatchItem, DealBatchUpdate, DealBatchResult, 'externalId'>(
      async (body, opts) => (await core.create(BATCH, body, opts)).results,
      async (body, opts) => (await core.call(BATCH, 'patch', { body }, opts)).results,
    ),
    ...trashing<Written<Deal>>(
      async (id, query, opts) => (await core.call(DEAL, 'delete', { params: { id }, query }, opts)).deal,
      async (id, opts) => (await core.call(RESTORE, 'post', { params: { id } }, opts)).deal,
    ),
  };
}
