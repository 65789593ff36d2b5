import type { TSchema } from '@sinclair/typebox';
import type { Executor } from '../../db/database.js';
import { externalIdHolders } from '../../db/external-ids.js';
import { inSavepoint } from '../../db/savepoint.js';
import { AppError, notFound, type FieldError } from '../../errors.js';
import { validateValue } from '../../http/validation.js';
import { etagMatches, etagOf } from '../../lib/etag.js';
import { ID_PATTERN } from '../../lib/ids.js';
import type { Caller } from './caller.js';
import { externalIdTaken } from './external-id.js';
import type { UpsertKey } from './batch.schemas.js';

/**
 * What a resource hands the batch runner: its single-item services (each item runs them in its own
 * savepoint, atomic with its events) and, optionally, a bulk create for the items that only create.
 * `P` is the route's path parameters (records: the object slug).
 */
export interface BatchResource<R, P> {
  /** The resource's key in a result (`lead`) and its name in messages (`Lead`). */
  noun: string;
  label: string;
  createSchema: TSchema;
  updateSchema: TSchema;
  /**
   * The checks of what an item's schema leaves open (the custom fields of leads, accounts and deals), read
   * once per batch, so that an item's 400 lists those problems beside its schema errors.
   */
  openFieldChecks?(db: Executor, caller: Caller): Promise<OpenFieldCheck>;
  /** Checks what the path names (records: the object) before any item runs: a 404 there is the whole request's. */
  checkPath?(db: Executor, caller: Caller, params: P): Promise<void>;
  find(db: Executor, caller: Caller, params: P, id: string): Promise<R | undefined>;
  create(trx: Executor, caller: Caller, params: P, input: Record<string, unknown>): Promise<R>;
  update(trx: Executor, caller: Caller, params: P, id: string, patch: Record<string, unknown>): Promise<R>;
  /** The item an upsert key designates: for `email` the oldest live lead with it, for `externalId` its holder, trashed or not. */
  holderOf(db: Executor, caller: Caller, params: P, by: UpsertKey, value: string): Promise<{ id: string; trashed: boolean } | undefined>;
  /**
   * Creates many items at once, in the caller's transaction: per input, the resource, or the AppError that
   * refused that input (and nothing of it written). Each created item's events are written with it.
   */
  createMany?(trx: Executor, caller: Caller, params: P, inputs: Record<string, unknown>[]): Promise<(R | AppError)[]>;
}

/** `create`: required fields must be present; an upsert, which may update, checks as `update`. */
export type OpenFieldCheck = (input: Record<string, unknown>, mode: 'create' | 'update') => FieldError[];

export interface BatchItemResult<R> {
  index: number;
  status: number;
  resource?: R;
  error?: { code: string; message: string; errors?: FieldError[] };
}

/** An item whose `ifMatch` names another version: 412 with the current resource. */
class PreconditionFailed<R> extends AppError {
  constructor(readonly current: R | undefined) {
    super('PRECONDITION_FAILED', 'ifMatch does not match the current version; the current resource is returned');
  }
}

interface Item {
  index: number;
  input: Record<string, unknown>;
  ifMatch?: string;
}

interface UpdateItem extends Item {
  id: string;
}

const failure = <R>(index: number, err: AppError, resource?: R): BatchItemResult<R> => ({
  index,
  status: err.status,
  ...(resource !== undefined ? { resource } : {}),
  error: { code: err.code, message: err.message, ...(err.errors ? { errors: err.errors } : {}) },
});

function invalid(index: number, errors: FieldError[]): BatchItemResult<never> {
  const message = errors.length === 1 ? `${errors[0]!.field}: ${errors[0]!.message}` : `${errors.length} fields are invalid`;
  return failure(index, new AppError('VALIDATION_FAILED', message, { errors }));
}

/** An item's own failure becomes its result; anything else (a bug, a lost database) fails the whole batch. */
function outcomeOf<R>(index: number, err: unknown): BatchItemResult<R> {
  if (err instanceof PreconditionFailed) return failure(index, err, err.current as R | undefined);
  if (err instanceof AppError && err.status < 500) return failure(index, err);
  throw err;
}

/** The value an item upserts by: e-mails compared as stored (trimmed, lower-cased). */
function keyOf(input: Record<string, unknown>, by: UpsertKey): string | undefined {
  const value = input[by];
  if (typeof value !== 'string') return undefined;
  return by === 'email' ? value.trim().toLowerCase() : value;
}

function splitIfMatch(raw: Record<string, unknown>): { input: Record<string, unknown>; ifMatch?: string; errors: FieldError[] } {
  const { ifMatch, ...input } = raw;
  if (ifMatch === undefined) return { input, errors: [] };
  if (typeof ifMatch === 'string' && ifMatch.length >= 1 && ifMatch.length <= 1024) return { input, ifMatch, errors: [] };
  return { input, errors: [{ field: 'ifMatch', code: 'invalid_type', message: 'must be an entity tag string' }] };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const notAnObject = (index: number) => invalid(index, [{ field: 'body', code: 'invalid_type', message: 'must be object' }]);

/**
 * Checks each create item on its own, with the same rules and messages as the single create: the valid items,
 * and a 400 result for each invalid one. Needs no database, so it runs before the transaction.
 */
export function checkCreateItems<R>(spec: BatchResource<R, unknown>, raw: unknown[], upsertBy: UpsertKey | undefined, open?: OpenFieldCheck) {
  const valid: Item[] = [];
  const refused: BatchItemResult<R>[] = [];
  raw.forEach((value, index) => {
    if (!isObject(value)) return refused.push(notAnObject(index));
    const { input, ifMatch, errors } = splitIfMatch(value);
    errors.push(...validateValue(spec.createSchema, input, 'body'), ...(open?.(input, upsertBy ? 'update' : 'create') ?? []));
    if (upsertBy && errors.length === 0 && keyOf(input, upsertBy) === undefined) {
      errors.push({ field: upsertBy, code: 'required', message: `is required to upsert by ${upsertBy}` });
    }
    if (errors.length) return refused.push(invalid(index, errors));
    valid.push({ index, input, ...(ifMatch !== undefined ? { ifMatch } : {}) });
  });
  return { valid, refused };
}

/** The same for update items: `id` and `ifMatch` apart, the rest checked as the single PATCH body. */
export function checkUpdateItems<R>(spec: BatchResource<R, unknown>, raw: unknown[], open?: OpenFieldCheck) {
  const valid: UpdateItem[] = [];
  const refused: BatchItemResult<R>[] = [];
  const idPattern = new RegExp(ID_PATTERN);
  raw.forEach((value, index) => {
    if (!isObject(value)) return refused.push(notAnObject(index));
    const { id, ...rest } = value;
    const { input, ifMatch, errors } = splitIfMatch(rest);
    if (typeof id !== 'string' || !idPattern.test(id)) errors.push({ field: 'id', code: id === undefined ? 'required' : 'invalid_format', message: 'must be a resource id' });
    errors.push(...validateValue(spec.updateSchema, input, 'body'), ...(open?.(input, 'update') ?? []));
    if (errors.length) return refused.push(invalid(index, errors));
    valid.push({ index, id: id as string, input, ...(ifMatch !== undefined ? { ifMatch } : {}) });
  });
  return { valid, refused };
}

async function requireVersion<R, P>(spec: BatchResource<R, P>, trx: Executor, caller: Caller, params: P, id: string | undefined, ifMatch: string): Promise<void> {
  const current = id === undefined ? undefined : await spec.find(trx, caller, params, id);
  if (current === undefined || !etagMatches(ifMatch, etagOf(current), 'strong')) throw new PreconditionFailed(current);
}

/** One create or upsert item, as if sent alone: the holder of its key updated (200), else a new item (201). */
async function upsertOne<R, P>(spec: BatchResource<R, P>, trx: Executor, caller: Caller, params: P, item: Item, by: UpsertKey | undefined): Promise<BatchItemResult<R>> {
  const key = by ? keyOf(item.input, by) : undefined;
  const holder = by && key !== undefined ? await spec.holderOf(trx, caller, params, by, key) : undefined;
  if (holder?.trashed) throw externalIdTaken(spec.noun);
  if (item.ifMatch !== undefined) await requireVersion(spec, trx, caller, params, holder?.id, item.ifMatch);
  if (holder) return { index: item.index, status: 200, resource: await spec.update(trx, caller, params, holder.id, item.input) };
  return { index: item.index, status: 201, resource: await spec.create(trx, caller, params, item.input) };
}

/**
 * POST /{resource}/batch in the caller's transaction. Items that only create (no holder of their upsert key,
 * no ifMatch, no earlier item of the batch creating the same key) go through the resource's bulk create,
 * if it has one: multi-row statements instead of a round of statements per item. Every other item runs
 * alone in its own savepoint, after them, so that an item upserting a key an earlier item created finds
 * that item, as if the items had been sent one by one.
 */
export async function runCreateBatch<R, P>(spec: BatchResource<R, P>, trx: Executor, caller: Caller, params: P, items: Item[], by: UpsertKey | undefined): Promise<BatchItemResult<R>[]> {
  const bulk: Item[] = [];
  const alone: Item[] = [];
  const claimed = new Set<string>();
  for (const item of items) {
    const key = by ? keyOf(item.input, by) : undefined;
    const createsOnly = spec.createMany !== undefined && item.ifMatch === undefined && (key === undefined || (!claimed.has(key) && !(await spec.holderOf(trx, caller, params, by!, key))));
    if (key !== undefined) claimed.add(key);
    (createsOnly ? bulk : alone).push(item);
  }
  const results: BatchItemResult<R>[] = [];
  if (bulk.length > 0) {
    const created = await spec.createMany!(trx, caller, params, bulk.map((i) => i.input));
    created.forEach((outcome, k) => results.push(outcome instanceof AppError ? outcomeOf(bulk[k]!.index, outcome) : { index: bulk[k]!.index, status: 201, resource: outcome }));
  }
  for (const item of alone) {
    results.push(await inSavepoint(trx, () => upsertOne(spec, trx, caller, params, item, by)).catch((err: unknown) => outcomeOf<R>(item.index, err)));
  }
  return results;
}

/** PATCH /{resource}/batch: each item in its own savepoint, its ifMatch checked against the current version first. */
export async function runUpdateBatch<R, P>(spec: BatchResource<R, P>, trx: Executor, caller: Caller, params: P, items: UpdateItem[]): Promise<BatchItemResult<R>[]> {
  const results: BatchItemResult<R>[] = [];
  for (const item of items) {
    const apply = async (): Promise<BatchItemResult<R>> => {
      if (item.ifMatch !== undefined) {
        const current = await spec.find(trx, caller, params, item.id);
        if (current === undefined) throw notFound(spec.label);
        if (!etagMatches(item.ifMatch, etagOf(current), 'strong')) throw new PreconditionFailed(current);
      }
      return { index: item.index, status: 200, resource: await spec.update(trx, caller, params, item.id, item.input) };
    };
    results.push(await inSavepoint(trx, apply).catch((err: unknown) => outcomeOf<R>(item.index, err)));
  }
  return results;
}

/** Every item's result, in the order of the items. */
export function inOrder<R>(...parts: BatchItemResult<R>[][]): BatchItemResult<R>[] {
  return parts.flat().sort((a, b) => a.index - b.index);
}

/** A resource's `holderOf` when only external ids designate items (accounts, deals: unique per organization). */
export function holderByExternalId(table: 'accounts' | 'deals') {
  return async (db: Executor, caller: Caller, _params: unknown, _by: UpsertKey, value: string) =>
    (await externalIdHolders(db, table, { column: 'organization_id', value: caller.organizationId }, [value])).get(value);
}
