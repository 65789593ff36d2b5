import type { AppContext } from '../../context.js';
import type { Field } from './definition.js';
import type { CustomObject } from './objects.schemas.js';
import { toCustomObject } from './objects.service.js';
import { allObjects } from './objects.store.js';
import type { ListRecordsQuery } from './records.schemas.js';
import { listRecords, type RecordView } from './records.service.js';

/** The records of one object whose relation field points at an item: the newest `limit`, and how many there are. */
export interface PointingRecords {
  object: CustomObject;
  field: Field;
  records: RecordView[];
  total: number;
}

/**
 * Every relation field of the organization's objects that targets `target` (`leads`, `accounts`, `deals` or an
 * object slug), with the live records pointing at item `id` — "related items" on the item's own page. Each is
 * one reverse lookup (`filter[field]=id`) through the record_values index; fields no record uses are left out.
 */
export async function recordsPointingAt(
  ctx: Pick<AppContext, 'database' | 'cipher' | 'clock' | 'blindIndex' | 'cursorSeal'>,
  organization: { id: string; timezone: string },
  target: string,
  id: string,
  limit: number,
): Promise<PointingRecords[]> {
  const objects = await allObjects(ctx.database.db, organization.id);
  const found: PointingRecords[] = [];
  for (const stored of objects) {
    for (const field of stored.definition.fields.filter((f) => f.type === 'relation' && f.target === target)) {
      // filter[<key>] parameters are read from the query as sent (record-filters.ts), beside the typed ones.
      const query: ListRecordsQuery = Object.assign({ page: 1, limit }, { [`filter[${field.key}]`]: id });
      const { records, pagination } = await listRecords(ctx, organization, stored.slug, query);
      if (records.length) found.push({ object: toCustomObject(stored), field, records, total: pagination.total ?? records.length });
    }
  }
  return found;
}
