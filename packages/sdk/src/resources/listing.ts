import { items, pages } from '../pagination.js';
import type { CallOptions, Pagination } from '../types.js';

/**
 * The three ways to read a list, built from the one call that fetches a page: `list` (one page as the
 * API answers it, with any `sort`, filters, `page` or `after`), `pages` (every page, following `nextCursor`)
 * and `iterate` (every item of every page).
 */
export function listing<Q extends { page?: number; after?: string }, D extends { pagination: Pagination }, T>(
  fetchPage: (query: Q, opts?: CallOptions) => Promise<D>,
  pick: (page: D) => T[],
) {
  const pagesOf = (query: Q = {} as Q, opts?: CallOptions) => pages((q: Q) => fetchPage(q, opts), query);
  return {
    list: (query: Q = {} as Q, opts?: CallOptions): Promise<D> => fetchPage(query, opts),
    pages: pagesOf,
    iterate: (query: Q = {} as Q, opts?: CallOptions): AsyncGenerator<T, void, undefined> => items(pagesOf(query, opts), pick),
  };
}
