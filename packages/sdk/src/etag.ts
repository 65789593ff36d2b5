/**
 * Entity tags (docs/sync.md, "Safe concurrent edits"). Every resource the client returns from a one-resource
 * call (get, create, update, delete, restore, and the `data` of a 412) or in a batch result carries the server's
 * ETag, kept out of sight (not enumerable, not serialized): read it with `etagOf` and send it back as `ifMatch`.
 */
const ETAG = Symbol.for('crm-sdk.etag');

/** The ETag the server sent with this resource, or undefined (a list item, or a resource built by hand). */
export function etagOf(resource: object): string | undefined {
  return (resource as { [ETAG]?: string })[ETAG];
}

/**
 * Tags the one resource in a success or error `data` (`{lead: {...}}`, or the deal stages `{stages: [...]}`,
 * one resource that is a list) with the answer's ETag. Pages (`{leads: [...], pagination}`) have no tag and
 * are left alone.
 */
export function tagData(data: unknown, etag: string | null): void {
  if (etag === null || data === null || typeof data !== 'object') return;
  const values = Object.values(data as Record<string, unknown>);
  const resource = values[0];
  if (values.length !== 1 || resource === null || typeof resource !== 'object') return;
  Object.defineProperty(resource, ETAG, { value: etag, enumerable: false });
}

/**
 * Tags the item of each batch result (`{index, status, lead?, etag?, error?}`) with the result's `etag`, the
 * ETag a GET of the item answers: `etagOf(result.lead)` works as for a resource from a one-resource call.
 */
export function tagResults<R>(results: R[]): R[] {
  for (const result of results as Record<string, unknown>[]) {
    if (typeof result.etag !== 'string') continue;
    for (const [key, value] of Object.entries(result)) {
      if (key !== 'error' && value !== null && typeof value === 'object') Object.defineProperty(value, ETAG, { value: result.etag, enumerable: false });
    }
  }
  return results;
}
