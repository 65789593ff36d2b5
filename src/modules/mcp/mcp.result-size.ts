/**
 * The bound on what a list tool hands a model. A page of 100 leads, each with long custom text, is megabytes of
 * JSON (and an MCP result carries it twice: as text and as structuredContent), more than a client passes to its
 * model. A page over MAX_RESULT_CHARS is read again with fewer items, as a page of the list's own (its cursor and
 * counts are the service's), and says so in `truncated`. One item is never cut: a page of one, or a get, comes
 * back whole whatever its size.
 */

/** The most characters of JSON text a list tool returns (some 12,000–17,000 tokens for a model). */
export const MAX_RESULT_CHARS = 50_000;

/** Room kept for the `truncated` note of a shortened page. */
const NOTE_ROOM = 400;

type Result = Record<string, unknown>;
type ListInput = Record<string, unknown>;

interface Page {
  key: string;
  items: unknown[];
}

/** A list's page: `pagination` beside exactly one array of items ({leads, pagination}, {timeline, pagination}…). */
function pageOf(result: Result): Page | undefined {
  if (typeof result.pagination !== 'object' || result.pagination === null) return undefined;
  const arrays = Object.entries(result).filter((entry): entry is [string, unknown[]] => Array.isArray(entry[1]));
  return arrays.length === 1 ? { key: arrays[0]![0], items: arrays[0]![1] } : undefined;
}

const sizeOf = (value: unknown) => JSON.stringify(value).length;

/** How many of the page's first items fit, with the rest of the result and the note: at least one. */
function fitting(result: Result, page: Page): number {
  let size = sizeOf({ ...result, [page.key]: [] }) + NOTE_ROOM;
  let count = 0;
  for (const item of page.items) {
    size += sizeOf(item) + 1;
    if (size > MAX_RESULT_CHARS) break;
    count += 1;
  }
  return Math.max(1, count);
}

/**
 * The input reading the first `count` items of the page `input` asked for, as a page of its own. Cursor mode
 * (`after`, or a list without pages such as a timeline) keeps its start with a smaller `limit`. Page mode starts
 * at (page − 1) × limit: the new page size is the largest one up to `count` dividing that offset, so the page
 * starts at the same item and its number, total and cursor are the list's own for that size.
 */
function fewer(input: ListInput, count: number): ListInput {
  if (input.after !== undefined || typeof input.page !== 'number' || typeof input.limit !== 'number') return { ...input, limit: count };
  const offset = (input.page - 1) * input.limit;
  let limit = count;
  while (offset % limit !== 0) limit -= 1;
  return { ...input, page: offset / limit + 1, limit };
}

/** Runs a tool's `read`; a page whose JSON is over MAX_RESULT_CHARS is read again, shorter, until it fits or holds one item. */
export async function readWithinSize(read: (input: ListInput) => Promise<Result>, input: ListInput): Promise<Result> {
  const first = await read(input);
  let asked = input;
  let result = first;
  for (let page = pageOf(result); page && page.items.length > 1 && sizeOf(result) > MAX_RESULT_CHARS; page = pageOf(result)) {
    asked = fewer(asked, fitting(result, page));
    result = await read(asked);
  }
  if (result === first) return result;
  const returned = pageOf(result)?.items.length ?? 0;
  const of = pageOf(first)!.items.length;
  const message = `Cut to ${returned} of the ${of} items of the page asked for, to keep the result under ${MAX_RESULT_CHARS} characters; \`pagination\` describes the page returned. Continue with \`after\` = pagination.nextCursor, or ask for a smaller \`limit\`.`;
  return { ...result, truncated: { returned, of, maxChars: MAX_RESULT_CHARS, message } };
}
