import type { AppContext } from '../../context.js';
import type { BatchResource } from '../shared/batch.service.js';
import { RecordInput, RecordPatch } from './records.schemas.js';
import { createRecord, findLiveRecord, recordHolders, recordKeys, requireObject, updateRecord, type RecordView } from './records.service.js';

/** The path of a custom object's records: its slug. */
export type RecordPath = { object: string };

/**
 * Records in the batch runner (POST and PATCH /objects/{object}/records/batch, `crm import records --upsert-by`):
 * upserts by external id, unique per object.
 */
export function recordBatch(ctx: AppContext): BatchResource<RecordView, RecordPath> {
  return {
    noun: 'record',
    label: 'Record',
    upsertBy: ['externalId'],
    table: 'records',
    createSchema: RecordInput,
    updateSchema: RecordPatch,
    checkPath: async (db, caller, p) => void (await requireObject(ctx, db, caller.organizationId, p.object)),
    find: (db, caller, p, id) => findLiveRecord(ctx, db, caller.organizationId, p.object, id),
    create: (trx, caller, p, input, opts) => createRecord(ctx, trx, caller, p.object, input, opts),
    update: (trx, caller, p, id, patch, opts) => updateRecord(ctx, trx, caller, p.object, id, patch, opts),
    lockKeys: (caller, p, inputs) => recordKeys(caller.organizationId, p.object, inputs),
    holdersOf: (db, caller, p, _by, values) => recordHolders(ctx, db, caller.organizationId, p.object, values),
  };
}
