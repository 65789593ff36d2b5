import { Type, type Static, type TSchema } from '@sinclair/typebox';

export const DEFAULT_LIMIT = 25;
export const MAX_LIMIT = 100;

/**
 * Optional on the wire (a caller, a generated client or an MCP tool may leave it out) yet always present once
 * validated, because the validators fill `default` (Ajv `useDefaults`): so handlers keep a plain number.
 */
const defaulted = <T extends TSchema>(schema: T): T => Type.Optional(schema) as unknown as T;

export const PageQuery = {
  page: defaulted(Type.Integer({ minimum: 1, maximum: 100_000, default: 1, description: 'Page number, from 1 (page mode; leave it out with `after`).' })),
  limit: defaulted(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT, description: `Page size (max ${MAX_LIMIT}).` })),
};

/**
 * Two modes. Page mode (`page`): `page`, `total` and `totalPages` are set. Cursor mode (`after`): the three are
 * absent, since counting the filter is O(n) and a cursor page costs the same at any depth; `hasMore` and
 * `nextCursor` say whether and how to go on. Both modes return `nextCursor`, so a client can switch to
 * cursors after a first page.
 */
export const Pagination = Type.Object(
  {
    page: Type.Optional(Type.Integer({ description: 'Page mode only.' })),
    limit: Type.Integer(),
    total: Type.Optional(Type.Integer({ description: 'Page mode only: how many items match the filter.' })),
    totalPages: Type.Optional(Type.Integer({ description: 'Page mode only.' })),
    hasMore: Type.Boolean(),
    nextCursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as `after` for the next page (same `sort` and filters); null on the last page.' }),
  },
  { $id: 'Pagination' },
);
export type Pagination = Static<typeof Pagination>;

export interface PageRequest {
  page: number;
  limit: number;
}

export function offsetOf(p: PageRequest): number {
  return (p.page - 1) * p.limit;
}

export function paginate(p: PageRequest, total: number, nextCursor: string | null = null): Pagination {
  const totalPages = Math.ceil(total / p.limit);
  const hasMore = p.page < totalPages;
  return { page: p.page, limit: p.limit, total, totalPages, hasMore, nextCursor: hasMore ? nextCursor : null };
}

/** Cursor mode: no count; `hasMore` from one row read past the page. */
export function cursorPagination(limit: number, nextCursor: string | null): Pagination {
  return { limit, hasMore: nextCursor !== null, nextCursor };
}
