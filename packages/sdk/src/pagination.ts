import type { Pagination } from './types.js';

/** Every page of a list, fetched one after the other from `startPage` until `hasMore` is false. */
export async function* pages<D extends { pagination: Pagination }>(fetchPage: (page: number) => Promise<D>, startPage = 1): AsyncGenerator<D, void, undefined> {
  for (let page = startPage; ; page += 1) {
    const data = await fetchPage(page);
    yield data;
    if (!data.pagination.hasMore) return;
  }
}

/**
 * Every item of every page. Lists are newest first with page numbers, so an item created while iterating
 * shifts the next page by one and its first item repeats the previous page's last: items already seen on
 * the previous page are skipped (memory stays one page, whatever the list's size).
 */
export async function* items<D, T extends { id: string }>(source: AsyncIterable<D>, pick: (page: D) => T[]): AsyncGenerator<T, void, undefined> {
  let previous = new Set<string>();
  for await (const page of source) {
    const current = new Set<string>();
    for (const item of pick(page)) {
      current.add(item.id);
      if (!previous.has(item.id)) yield item;
    }
    previous = current;
  }
}
