import type { Pagination } from './types.js';

/**
 * Every page of a list: the first as asked (`query`), then each next one by its cursor (`after` =
 * `nextCursor`) until `nextCursor` is null. Cursor pages neither repeat nor skip an item when others write
 * while you iterate, and cost the same at any depth.
 */
export async function* pages<Q extends { after?: string; page?: number }, D extends { pagination: Pagination }>(
  fetchPage: (query: Q) => Promise<D>,
  query: Q,
): AsyncGenerator<D, void, undefined> {
  for (let next: Q | null = query; next !== null; ) {
    const data: D = await fetchPage(next);
    yield data;
    const cursor = data.pagination.nextCursor;
    next = cursor ? ({ ...query, page: undefined, after: cursor } as Q) : null;
  }
}

/** Every item of every page (memory stays one page, whatever the list's size). */
export async function* items<D, T>(source: AsyncIterable<D>, pick: (page: D) => T[]): AsyncGenerator<T, void, undefined> {
  for await (const page of source) yield* pick(page);
}
