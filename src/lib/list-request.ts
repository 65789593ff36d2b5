import { Type } from '@sinclair/typebox';
import { validationFailed, type FieldError } from '../errors.js';
import type { ListCursors, ListPosition } from './list-cursor.js';
import { PageQuery, type PageRequest } from './pagination.js';

/**
 * The list parameters every list shares (contract §8): `after` (cursor mode), `sort`, and the creation and
 * change time ranges. A resource spreads `ListParams(sorts)` into its query schema next to its own filters,
 * and its service turns the validated query into a `ListRequest` with `listRequest` and the organization's cursors.
 */

/** The sorts of leads, accounts and deals. Records take createdAt/updatedAt and their date and number fields. */
export const NAMED_SORTS = ['-createdAt', 'createdAt', '-updatedAt', 'updatedAt', '-name', 'name'] as const;
export const DEFAULT_SORT = '-createdAt';
/** The sorts of lists whose items have no name (notes; tasks add their due day). */
export const TIME_SORTS = ['-createdAt', 'createdAt', '-updatedAt', 'updatedAt'] as const;
/** The sorts of logs, in creation order only (a webhook's deliveries, erasure receipts). */
export const CREATION_SORTS = ['-createdAt', 'createdAt'] as const;

/** An ISO 8601 instant query parameter (strict bound), validated like the time ranges of every list. */
export const instant = (description: string) => Type.Optional(Type.String({ format: 'date-time', maxLength: 64, description }));

export const TimeRangeQuery = {
  createdAfter: instant('Only items created strictly after this instant (ISO 8601 with Z or an offset).'),
  createdBefore: instant('Only items created strictly before this instant.'),
  updatedAfter: instant('Only items last changed strictly after this instant.'),
  updatedBefore: instant('Only items last changed strictly before this instant.'),
};

/** The creation range alone: the list of items that never change (erasure receipts) takes no updated* bounds. */
export const CreatedRangeQuery = { createdAfter: TimeRangeQuery.createdAfter, createdBefore: TimeRangeQuery.createdBefore };

export const AfterQuery = {
  after: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 1000,
      description:
        'Cursor mode: `nextCursor` of the previous page, unchanged (made with the same `sort`; sealed for the organization, so an altered or another organization\'s cursor is 400). The page then carries no `total`; its cost does not grow with depth.',
    }),
  ),
};

/** `page`, `limit`, `after` and the time ranges: the parameters of every list of items that change. */
export const ListParams = { ...PageQuery, ...AfterQuery, ...TimeRangeQuery };

/** `sort` among the given orders. */
export function SortQuery(sorts: readonly string[]) {
  return {
    sort: Type.Optional(
      Type.Unsafe<string>({ type: 'string', enum: [...sorts], description: `Order of the list; default \`${DEFAULT_SORT}\` (newest first). A leading - is descending; ties are broken by creation order.` }),
    ),
  };
}

export interface TimeRange {
  createdAfter?: string;
  createdBefore?: string;
  updatedAfter?: string;
  updatedBefore?: string;
}

export interface ListRequest extends PageRequest {
  /** The sort as the client named it (or the list's default). */
  sort: string;
  /** Cursor mode: the position after which the page starts (null for the first page of a cursor walk). */
  after: ListPosition | null;
  cursor: boolean;
  range: TimeRange;
  /** The sealed cursor of a row's position in this sort: a page's `nextCursor`. */
  cursorAt(position: { value: string | number | null; seq: number }): string;
}

interface ListQueryIn {
  page: number;
  limit: number;
  after?: string | undefined;
  sort?: string | undefined;
  createdAfter?: string | undefined;
  createdBefore?: string | undefined;
  updatedAfter?: string | undefined;
  updatedBefore?: string | undefined;
}

const RANGE_KEYS = ['createdAfter', 'createdBefore', 'updatedAfter', 'updatedBefore'] as const;

/**
 * The time range bounds of a validated query in the stored form (UTC, milliseconds, Z), so they compare as text
 * with the stored timestamps; a bound that is no instant is added to `errors`, named.
 */
export function timeRangeOf(query: { [K in (typeof RANGE_KEYS)[number]]?: string | undefined }, errors: FieldError[]): TimeRange {
  const range: TimeRange = {};
  for (const key of RANGE_KEYS) {
    const value = query[key];
    if (value === undefined) continue;
    const time = Date.parse(value);
    if (Number.isNaN(time)) errors.push({ field: key, code: 'invalid_format', message: 'must be an ISO 8601 timestamp, e.g. 2026-11-21T10:00:00.000Z' });
    else range[key] = new Date(time).toISOString();
  }
  return range;
}

/**
 * The validated list query as a request, with `cursors` the organization's. A cursor that does not open
 * (forged, altered, another organization's, or handed out before cursors were sealed) or was made for another
 * sort is a 400 naming `after`, as is `after` together with a `page` other than 1; the time ranges as timeRangeOf.
 */
export function listRequest(query: ListQueryIn, cursors: ListCursors, defaultSort = DEFAULT_SORT): ListRequest {
  const sort = query.sort ?? defaultSort;
  const errors: FieldError[] = [];
  let after: ListPosition | null = null;
  if (query.after !== undefined) {
    after = cursors.open(query.after, sort);
    if (after === null) errors.push({ field: 'after', code: 'invalid_cursor', message: `is not a cursor of this list in sort ${sort} (pass back nextCursor unchanged, with the same sort; one handed out before a server upgrade may no longer open: start the listing again without after)` });
    if (query.page !== 1) errors.push({ field: 'page', code: 'not_allowed', message: 'cannot be combined with after: a cursor names its own position' });
  }
  const range = timeRangeOf(query, errors);
  if (errors.length) throw validationFailed(errors);
  const cursorAt = (position: { value: string | number | null; seq: number }) => cursors.seal({ sort, ...position });
  return { page: query.page, limit: query.limit, sort, after, cursor: query.after !== undefined, range, cursorAt };
}
