import type { AppContext } from '../../context.js';
import { AppError } from '../../errors.js';
import { oneByOne, type ImportAdapter } from '../import/csv-import.js';
import type { Field } from './definition.js';
import { RecordInput } from './records.schemas.js';
import { createRecord, requireObject } from './records.service.js';

/** CSV cells are text: numbers and booleans become JSON values so the definition's type checks apply as in the API. */
function cellValue(field: Field | undefined, cell: string): unknown {
  if (field?.type === 'number') return /^\s*-?\d+(\.\d+)?([eE][+-]?\d+)?\s*$/.test(cell) ? Number(cell) : cell;
  if (field?.type === 'boolean') {
    const value = cell.trim().toLowerCase();
    if (['true', 'yes', '1'].includes(value)) return true;
    if (['false', 'no', '0'].includes(value)) return false;
  }
  return cell;
}

/** `crm import records FILE --object slug`: columns are the object's field keys (and `stage`). */
export async function recordImportAdapter(ctx: AppContext, organizationId: string, slug: string | undefined): Promise<ImportAdapter> {
  if (!slug) throw new AppError('VALIDATION_FAILED', 'Importing records needs --object <slug>');
  const object = await requireObject(ctx, ctx.database.db, organizationId, slug);
  const fields = new Map(object.definition.fields.map((f) => [f.key, f]));
  return {
    resource: `records of ${slug}`,
    schema: RecordInput,
    fromCsv: (cells) => Object.fromEntries(Object.entries(cells).map(([key, cell]) => [key, cellValue(fields.get(key), cell)])),
    createMany: oneByOne((trx, caller, input: Record<string, unknown>) => createRecord(ctx, trx, caller, slug, input)),
  };
}
