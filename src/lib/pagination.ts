import { Type, type Static, type TSchema } from '@sinclair/typebox';

export const DEFAULT_LIMIT = 25;
export const MAX_LIMIT = 100;

/**
 * Optional on the wire (a caller, a generated client or an MCP tool may leave it out) yet always present once
 * validated, because the validators fill `default` (Ajv `useDefaults`): so handlers keep a plain number.
 */
const defaulted = <T extends TSchema>(schema: T): T => Type.Optional(schema) as unknown as T;

export const PageQuery = {
  page: defaulted(Type.Integer({ minimum: 1, maximum: 100_000, default: 1, description: 'Page number, from 1.' })),
  limit: defaulted(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT, description: `Page size (max ${MAX_LIMIT}).` })),
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
