import { tagResults } from '../etag.js';
import type { CallOptions, CreateOptions } from '../types.js';

/**
 * `batch`, `upsert` and `updateMany`, the same for every resource, built from its two batch calls (like
 * `trashing`). Each answers one result per item, in order: `{index, status, <resource>?, error?}` — read every
 * `status`: a batch succeeds as a whole (200) while some of its items may be refused (400, 404, 409, 412).
 * A result's item carries its ETag (`etagOf(result.lead)`, also `result.etag`): the `ifMatch` of a later write.
 * A batch is one request for the rate limit; `batch` and `upsert` send an Idempotency-Key, so the client's
 * automatic retries replay the results instead of writing twice.
 */
export function batching<Create, Update, Result, By extends string>(
  post: (body: { items: Create[]; upsertBy?: By }, opts?: CreateOptions) => Promise<Result[]>,
  patch: (body: { items: Update[] }, opts?: CallOptions) => Promise<Result[]>,
) {
  return {
    /** Creates up to 100 items; each result is 201 with the item, or the item's error. */
    batch: async (items: Create[], opts?: CreateOptions): Promise<Result[]> => tagResults(await post({ items }, opts)),
    /** Creates or updates up to 100 items by `by`: the holder of the key updated (200), else created (201). */
    upsert: async (items: Create[], options: { by: By }, opts?: CreateOptions): Promise<Result[]> => tagResults(await post({ items, upsertBy: options.by }, opts)),
    /** Updates up to 100 items, `{id, ifMatch?, …fields}` each: 200, or 404, 400, 409, 412 (with the current item). */
    updateMany: async (items: Update[], opts?: CallOptions): Promise<Result[]> => tagResults(await patch({ items }, opts)),
  };
}
