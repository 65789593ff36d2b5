// Type plumbing from the generated OpenAPI types to method signatures: a resource names its path and
// method, and gets the request body, query and the unwrapped `data` of the success envelope.
import type { components, paths } from './generated/openapi.js';

export type Path = keyof paths;
export type Method = 'get' | 'post' | 'patch' | 'put' | 'delete';

/** Methods a path actually defines (generated types mark the others `never`). */
export type MethodOf<P extends Path> = {
  [M in Method]: paths[P][M] extends never | undefined ? never : M;
}[Method];

type Operation<P extends Path, M extends MethodOf<P>> = NonNullable<paths[P][M]>;
type JsonOf<T> = T extends { content: { 'application/json': infer B } } ? B : never;

/** The JSON body a route accepts. */
export type RequestBody<P extends Path, M extends MethodOf<P>> =
  Operation<P, M> extends { requestBody?: infer R } ? JsonOf<NonNullable<R>> : never;

/** Query parameters; every one is optional because the server applies the documented defaults. */
export type Query<P extends Path, M extends MethodOf<P>> =
  Operation<P, M> extends { parameters: { query?: infer Q } } ? ([NonNullable<Q>] extends [never] ? never : Partial<NonNullable<Q>>) : never;

/**
 * Filters on fields the static OpenAPI document can't name (an organization's custom fields, a custom object's
 * fields): `'filter[<key>]'` for equality, `'filter[<key>][gte|lte|gt|lt]'` for ranges (docs/sync.md).
 */
export type FieldFilters = { [key: `filter[${string}]`]: string | number | boolean | undefined };

/** Path parameters such as `{id}`. */
export type PathParams<P extends Path, M extends MethodOf<P>> =
  Operation<P, M> extends { parameters: { path?: infer A } } ? NonNullable<A> : never;

type SuccessEnvelope<R> = R extends { 200: infer S } ? JsonOf<S> : R extends { 201: infer S } ? JsonOf<S> : never;

/** The `data` member of the success envelope (`{status: true, code: "SUCCESS", data}`). */
export type ResponseData<P extends Path, M extends MethodOf<P>> =
  Operation<P, M> extends { responses: infer R } ? (SuccessEnvelope<R> extends { data: infer D } ? D : never) : never;

export type Schema<N extends keyof components['schemas']> = components['schemas'][N];

export type ErrorCode = Schema<'ErrorEnvelope'>['code'];
export type FieldError = NonNullable<Schema<'ErrorEnvelope'>['errors']>[number];
export type Pagination = Schema<'Pagination'>;

/** Options every call accepts. */
export interface CallOptions {
  /** Cancels the call, including any retry wait. */
  signal?: AbortSignal;
  /** Overrides the client's maxRetries for this call (0 disables retries). */
  maxRetries?: number;
  /**
   * Sent as If-Match by `update`, `delete`, `restore` and `dealStages.put`: the write happens only if the
   * resource still has this ETag (`etagOf(resource)` of the version you read), else the call throws a
   * CrmApiError with status 412, code PRECONDITION_FAILED and the current resource in `data`.
   */
  ifMatch?: string;
}

/** Options of a creating call. */
export interface CreateOptions extends CallOptions {
  /** Sent as Idempotency-Key; a random UUID when omitted. Reuse the same value to retry a create safely. */
  idempotencyKey?: string;
}

/**
 * What a write answers about an item that existed before it (`update`, `delete`, `restore`, and a batch's 200 and
 * 412 results) when the key may write that kind of item but not read it (`leads:write` without `leads:read`…):
 * `{id, updatedAt, deletedAt}`, plus `objectSlug` for a record — none of the item's stored fields.
 */
export type MinimalView = Schema<'MinimalView'>;

/** A write's answer about an existing item: the whole item, or its minimal view (`isWhole` tells them apart). */
export type Written<T, M = MinimalView> = T | M;
