import { Type, type Static } from '@sinclair/typebox';

export const DEFAULT_LIMIT = 25;
export const MAX_LIMIT = 100;

export const PageQuery = {
  page: Type.Integer({ minimum: 1, maximum: 100_000, default: 1, description: 'Page number, from 1.' }),
  limit: Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT, description: `Page size (max ${MAX_LIMIT}).` }),
};

export const Pagination = Type.Object(
  {
    page: Type.Integer(),
    limit: Type.Integer(),
    total: Type.Integer(),
    totalPages: Type.Integer(),
    hasMore: Type.Boolean(),
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

export function paginate(p: PageRequest, total: number): Pagination {
  const totalPages = Math.ceil(total / p.limit);
  return { page: p.page, limit: p.limit, total, totalPages, hasMore: p.page < totalPages };
}
