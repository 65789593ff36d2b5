import type { Core } from '../core.js';
import { etagOf } from '../etag.js';
import type { CallOptions, CreateOptions, Query, ResponseData, Schema, FieldFilters, Written } from '../types.js';
import { listing } from './listing.js';
import { trashing } from './trash.js';
import { batching } from './batch.js';

const RECORDS = '/api/public/v1/objects/{object}/records';
const RECORD = '/api/public/v1/objects/{object}/records/{id}';
const RESTORE = '/api/public/v1/objects/{object}/records/{id}/restore';
const BATCH = '/api/public/v1/objects/{object}/records/batch';

/** A record is flat: `{id, objectSlug, stage, <field key>: value, …, createdAt, updatedAt}`. */
export type ObjectRecord = Schema<'Record'>;
/** Field values by field key (and `stage`); checked against the object's definition by the server. */
export type RecordValues = { stage?: string | null } & Record<string, unknown>;
export type RecordQuery = Query<typeof RECORDS, 'get'> & FieldFilters;
export type RecordPage = ResponseData<typeof RECORDS, 'get'>;
/** A batch item: the record's values, and `ifMatch` (with upsert) or `id` (updateMany). */
export type RecordBatchItem = RecordValues & { externalId?: string | null; ifMatch?: string };
export type RecordBatchUpdate = RecordBatchItem & { id: string };
export type RecordBatchResult = ResponseData<typeof BATCH, 'post'>['results'][number];

/** The records of one custom object: `crm.records('projects').create({ title: 'Relaunch' })`. */
export function recordsResource(core: Core) {
  return (object: string) => {
    const params = (id?: string): Record<string, string> => (id === undefined ? { object } : { object, id });
    return {
      create: async (values: RecordValues, opts?: CreateOptions): Promise<ObjectRecord> => (await core.create(RECORDS, values, { ...opts, params: params() })).record,
      get: async (id: string, opts?: CallOptions): Promise<ObjectRecord> => (await core.call(RECORD, 'get', { params: params(id) }, opts)).record,
      /** The current version, or undefined when `known` (as returned earlier) is still current (304, no body sent). */
      getIfChanged: async (known: ObjectRecord, opts?: CallOptions): Promise<ObjectRecord | undefined> =>
        (await core.call(RECORD, 'get', { params: params(known.id), ifNoneMatch: etagOf(known) }, opts))?.record,
      update: async (id: string, patch: RecordValues, opts?: CallOptions): Promise<Written<ObjectRecord>> => (await core.call(RECORD, 'patch', { params: params(id), body: patch }, opts)).record,
      /** Moves the record to another of its object's stages (records record.stage_changed). */
      moveStage: async (id: string, stage: string, opts?: CallOptions): Promise<Written<ObjectRecord>> => (await core.call(RECORD, 'patch', { params: params(id), body: { stage } }, opts)).record,
      ...listing((query: RecordQuery, opts?: CallOptions) => core.call(RECORDS, 'get', { params: params(), query }, opts), (page) => page.records),
      ...batching<RecordBatchItem, RecordBatchUpdate, RecordBatchResult, 'externalId'>(
        async (body, opts) => (await core.create(BATCH, body, { ...opts, params: params() })).results,
        async (body, opts) => (await core.call(BATCH, 'patch', { params: params(), body }, opts)).results,
      ),
      ...trashing<Written<ObjectRecord>>(
        async (id, query, opts) => (await core.call(RECORD, 'delete', { params: params(id), query }, opts)).record,
        async (id, opts) => (await core.call(RESTORE, 'post', { params: params(id) }, opts)).record,
      ),
    };
  };
}
