import type { Pagination } from './types.js';

/**
 * Every page of a list: the first as asked (`query`), then each next one by its cursor (`after` =
 * `nextCursor`) until `nextCursor` is null; a list without cursors goes on by page number while `hasMore`.
 * Cursor pages neither repeat nor skip an item when others write while you iterate, and cost the same at any
 * depth.
 */
export async function* pages<Q extends { after?: string; page?: number }, D extends { pagination: Pagination }>(
  fetchPage: (query: Q) => Promise<D>,
  query: Q,
): AsyncGenerator<D, void, undefined> {
  for (let next: Q | null = query; next !== null; ) {
    const data: D = await fetchPage(next);
    yield data;
    const { nextCursor, hasMore, page } = data.pagination;
    if (nextCursor) next = { ...query, page: undefined, after: nextCursor } as Q;
    // A list that pages by number only (no cursor yet) still says whether more follow.
    else next = hasMore && page !== undefined ? ({ ...query, page: page + 1 } as Q) : null;
  }
}

/** Every item of every page (memory stays one page, whatever the list's size). */
export async function* items<D, T>(source: AsyncIterable<D>, pick: (page: D) => T[]): AsyncGenerator<T, void, undefined> {
  for await (const page of source) yield* pick(page);
}
