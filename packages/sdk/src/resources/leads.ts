import type { Core } from '../core.js';
import { etagOf } from '../etag.js';
import type { CallOptions, CreateOptions, Query, RequestBody, ResponseData, Schema, FieldFilters, Written } from '../types.js';
import { listing } from './listing.js';
import { trashing } from './trash.js';
import { batching } from './batch.js';

const LEADS = '/api/public/v1/leads';
const LEAD = '/api/public/v1/leads/{id}';
const RESTORE = '/api/public/v1/leads/{id}/restore';
const BATCH = '/api/public/v1/leads/batch';

export type Lead = Schema<'Lead'>;
export type LeadCreate = RequestBody<typeof LEADS, 'post'>;
export type LeadUpdate = RequestBody<typeof LEAD, 'patch'>;
export type LeadQuery = Query<typeof LEADS, 'get'> & FieldFilters;
export type LeadPage = ResponseData<typeof LEADS, 'get'>;
export type LeadBatchItem = RequestBody<typeof BATCH, 'post'>['items'][number];
export type LeadBatchUpdate = RequestBody<typeof BATCH, 'patch'>['items'][number];
export type LeadBatchResult = ResponseData<typeof BATCH, 'post'>['results'][number];

export function leadsResource(core: Core) {
  return {
    create: async (body: LeadCreate, opts?: CreateOptions): Promise<Lead> => (await core.create(LEADS, body, opts)).lead,
    get: async (id: string, opts?: CallOptions): Promise<Lead> => (await core.call(LEAD, 'get', { params: { id } }, opts)).lead,
    /** The current version, or undefined when `known` (as returned earlier) is still current (304, no body sent). */
    getIfChanged: async (known: Lead, opts?: CallOptions): Promise<Lead | undefined> =>
      (await core.call(LEAD, 'get', { params: { id: known.id }, ifNoneMatch: etagOf(known) }, opts))?.lead,
    update: async (id: string, patch: LeadUpdate, opts?: CallOptions): Promise<Written<Lead>> => (await core.call(LEAD, 'patch', { params: { id }, body: patch }, opts)).lead,
    ...listing((query: LeadQuery, opts?: CallOptions) => core.call(LEADS, 'get', { query }, opts), (page) => page.leads),
    ...batching<LeadBatchItem, LeadBatchUpdate, LeadBatchResult, 'externalId' | 'email'>(
      async (body, opts) => (await core.create(BATCH, body, opts)).results,
      async (body, opts) => (await core.call(BATCH, 'patch', { body }, opts)).results,
    ),
    ...trashing<Written<Lead>>(
      async (id, query, opts) => (await core.call(LEAD, 'delete', { params: { id }, query }, opts)).lead,
      async (id, opts) => (await core.call(RESTORE, 'post', { params: { id } }, opts)).lead,
    ),
  };
}
