import type { AppContext } from '../../context.js';
import { AppError } from '../../errors.js';
import { oneByOne, type ImportAdapter } from '../import/csv-import.js';
import { RecordInput } from './records.schemas.js';
import { recordBatch } from './records.batch.js';
import { createRecord, recordKeys, requireObject } from './records.service.js';

/**
 * `crm import records FILE --object slug`: columns are the object's field keys (and `stage`); each row is created by
 * the API's service, or upserted by the batch runner of POST /objects/{object}/records/batch (`--upsert-by externalId`).
 */
export async function recordImportAdapter(ctx: AppContext, organizationId: string, slug: string | undefined): Promise<ImportAdapter> {
  if (!slug) throw new AppError('VALIDATION_FAILED', 'Importing records needs --object <slug>');
  const object = await requireObject(ctx, ctx.database.db, organizationId, slug);
  return {
    resource: `records of ${slug}`,
    schema: RecordInput,
    rows: { kind: 'records', fields: object.definition.fields },
    createMany: oneByOne<RecordInput>(
      (caller, inputs) => recordKeys(caller.organizationId, slug, inputs),
      (trx, caller, input, opts) => createRecord(ctx, trx, caller, slug, input, opts),
    ),
    batch: { resource: recordBatch(ctx), params: { object: slug } },
  };
}
