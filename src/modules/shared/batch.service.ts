import type { TSchema } from '@sinclair/typebox';
import type { Dialect } from '../../config.js';
import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/database.js';
import { externalIdHolders, type ExternalIdHolder } from '../../db/external-ids.js';
import { lockKeys, type LockKey } from '../../db/key-locks.js';
import { lockRows, type LockableTable } from '../../db/row-lock.js';
import { inSavepoint } from '../../db/savepoint.js';
import { AppError, notFound, type FieldError } from '../../errors.js';
import { validateValue } from '../../http/validation.js';
import { etagMatches } from '../../lib/etag.js';
import { ID_PATTERN } from '../../lib/ids.js';
import type { Caller } from './caller.js';
import { externalIdKeys, externalIdTaken } from './external-id.js';
import type { UpsertKey } from './batch.schemas.js';
import type { WriteOptions } from './precondition.js';

/** What the runner tells an item's service: the batch holds the keys of all its items (BatchResource.lockKeys). */
const KEYS_LOCKED: Pick<WriteOptions, 'keysLocked'> = { keysLocked: true };

/**
 * What a resource hands the batch runner: its single-item services (each item runs them in its own
 * savepoint, atomic with its events) and, optionally, a bulk create and a bulk update for many items at
 * once. `P` is the route's path parameters (records: the object slug). Every one of them runs with the keys of
 * all the batch's items locked (lockKeys), and `create` and `update` are told so (`keysLocked`).
 */
export interface BatchResource<R, P> {
  /** The resource's key in a result (`lead`) and its name in messages (`Lead`). */
  noun: string;
  label: string;
  /** The keys an upsert may name (`upsertBy`): `externalId` for every resource, `email` too for leads. */
  upsertBy: readonly UpsertKey[];
  /** Its table, whose rows a batch locks before reading them (PostgreSQL). */
  table: LockableTable;
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
  /**
   * The live items among `ids`, by id, in one read: what `crm import --upsert-by` compares the items of a bulk
   * update with (upsert-rows.ts), as `find` would give each.
   */
  findMany?(db: Executor, caller: Caller, params: P, ids: readonly string[]): Promise<Map<string, R>>;
  create(trx: Executor, caller: Caller, params: P, input: Record<string, unknown>, opts: Pick<WriteOptions, 'keysLocked'>): Promise<R>;
  update(trx: Executor, caller: Caller, params: P, id: string, patch: Record<string, unknown>, opts: Pick<WriteOptions, 'keysLocked'>): Promise<R>;
  /**
   * The keys that writing these inputs probes or sets (their external ids; for leads their e-mails and phones
   * too), locked for the whole batch before it reads anything (PostgreSQL, db/key-locks.ts), in one statement:
   * concurrent batches and single writes of the same keys then take turns, and each sees what the previous
   * one committed.
   */
  lockKeys(caller: Caller, params: P, inputs: Record<string, unknown>[]): LockKey[];
  /**
   * The items upsert keys designate, by key, in one probe: for `email` the oldest live lead with it, for
   * `externalId` its holder, trashed or not. A key nothing holds is absent.
   */
  holdersOf(db: Executor, caller: Caller, params: P, by: UpsertKey, values: readonly string[]): Promise<Map<string, ExternalIdHolder>>;
  /**
   * The part of createMany that needs no transaction (for leads: phone numbers parsed, contacts encrypted), run
   * before the transaction for the items likely to create (prepareCreates), so that SQLite's one writer is not
   * held meanwhile: with HTTP_THREADS, another thread's batch writes while this one prepares. Per input, what
   * createMany takes beside it, or the AppError that refuses it.
   */
  prepareMany?(db: Executor, caller: Caller, params: P, inputs: Record<string, unknown>[]): Promise<unknown[]>;
  /**
   * Creates many items at once, in the caller's transaction: per input, the resource, or the AppError that
   * refused that input (and nothing of it written). Each created item's events are written with it. `prepared`:
   * per input, what prepareMany gave for it before the transaction, if anything (the resource prepares again
   * what it can no longer use, say after a definition change).
   */
  createMany?(trx: Executor, caller: Caller, params: P, inputs: Record<string, unknown>[], prepared: readonly unknown[]): Promise<(R | AppError)[]>;
  /**
   * Updates many distinct existing items at once, in the caller's transaction (their rows already locked),
   * each as `update` would after checking its `ifMatch` (PreconditionFailed): per item, the resource, the
   * AppError that refused it (nothing of it written), or undefined to have the runner apply it alone.
   */
  updateMany?(trx: Executor, caller: Caller, params: P, items: { id: string; input: Record<string, unknown>; ifMatch?: string | undefined }[]): Promise<(R | AppError | undefined)[]>;
}

/** Where a batch runs: the caller's transaction on its database, and the tagger its items' ifMatch is compared with. */
export interface BatchRun<P> extends Pick<AppContext, 'entityTagger'> {
  trx: Executor;
  dialect: Dialect;
  caller: Caller;
  params: P;
}

/** `create`: required fields must be present; an upsert, which may update, checks as `update`. */
export type OpenFieldCheck = (input: Record<string, unknown>, mode: 'create' | 'update') => FieldError[];

export interface BatchItemResult<R> {
  index: number;
  status: number;
  resource?: R;
  error?: { code: string; message: string; errors?: FieldError[] };
}

/**
 * An item whose `ifMatch` names another version: 412 with the current resource. Without one (nothing holds the
 * item's key, or the batch has no upsertBy and only creates) the message says so rather than promise a resource.
 */
export class PreconditionFailed<R> extends AppError {
  constructor(readonly current: R | undefined, message = 'ifMatch does not match the current version; the current resource is returned') {
    super('PRECONDITION_FAILED', message);
  }

  static noHolder(noun: string, by: UpsertKey | undefined): PreconditionFailed<never> {
    return new PreconditionFailed<never>(
      undefined,
      by === undefined
        ? 'ifMatch names a version, but without upsertBy an item only creates: nothing was written (send upsertBy to update the holder of a key)'
        : `ifMatch names a version, but no ${noun} holds this ${by}: nothing was written (send the item without ifMatch to create it)`,
    );
  }
}

/** Throws PreconditionFailed unless `ifMatch` is the current resource's tag (strong comparison, `*` any). */
export function versionCheck<R>(ctx: Pick<AppContext, 'entityTagger'>, ifMatch: string, current: R): void {
  if (!etagMatches(ifMatch, ctx.entityTagger.tagOf(current), 'strong')) throw new PreconditionFailed(current);
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

async function requireVersion<R, P>(spec: BatchResource<R, P>, run: BatchRun<P>, id: string | undefined, ifMatch: string, by: UpsertKey | undefined): Promise<void> {
  const current = id === undefined ? undefined : await spec.find(run.trx, run.caller, run.params, id);
  if (current === undefined) throw PreconditionFailed.noHolder(spec.noun, by);
  versionCheck(run, ifMatch, current);
}

/** One create or upsert item, as if sent alone: the holder of its key updated (200), else a new item (201). */
async function upsertOne<R, P>(spec: BatchResource<R, P>, run: BatchRun<P>, item: Item, by: UpsertKey | undefined): Promise<BatchItemResult<R>> {
  const { trx, caller, params } = run;
  const key = by ? keyOf(item.input, by) : undefined;
  const holder = by && key !== undefined ? (await spec.holdersOf(trx, caller, params, by, [key])).get(key) : undefined;
  if (holder?.trashed) throw externalIdTaken(spec.noun);
  if (item.ifMatch !== undefined) await requireVersion(spec, run, holder?.id, item.ifMatch, by);
  if (holder) return { index: item.index, status: 200, resource: await spec.update(trx, caller, params, holder.id, item.input, KEYS_LOCKED) };
  return { index: item.index, status: 201, resource: await spec.create(trx, caller, params, item.input, KEYS_LOCKED) };
}

/** The items to apply one by one, in the order of the batch, each in its own savepoint. */
async function runAlone<R, I extends Item>(run: BatchRun<unknown>, items: I[], apply: (item: I) => Promise<BatchItemResult<R>>): Promise<BatchItemResult<R>[]> {
  const results: BatchItemResult<R>[] = [];
  for (const item of [...items].sort((a, b) => a.index - b.index)) {
    results.push(await inSavepoint(run.trx, () => apply(item)).catch((err: unknown) => outcomeOf<R>(item.index, err)));
  }
  return results;
}

/**
 * Hands `updates` to the resource's bulk update: the results it settled, and the items it left to run alone
 * (those it could not apply exactly as the single update would, say a contact change that needs a fresh
 * duplicate probe).
 */
async function updateInBulk<R, P, I extends Item>(spec: BatchResource<R, P>, run: BatchRun<P>, updates: { item: I; id: string }[]) {
  const results: BatchItemResult<R>[] = [];
  const alone: I[] = [];
  if (updates.length === 0) return { results, alone };
  const outcomes = await spec.updateMany!(run.trx, run.caller, run.params, updates.map(({ item, id }) => ({ id, input: item.input, ifMatch: item.ifMatch })));
  outcomes.forEach((outcome, k) => {
    const { item } = updates[k]!;
    if (outcome === undefined) alone.push(item);
    else results.push(outcome instanceof AppError ? outcomeOf<R>(item.index, outcome) : { index: item.index, status: 200, resource: outcome });
  });
  return { results, alone };
}

/** An item whose key an earlier item of the batch names: it runs alone, after them (runCreateBatch). */
function repeatedKeys(keys: (string | undefined)[]): boolean[] {
  const claimed = new Set<string>();
  return keys.map((key) => {
    if (key === undefined) return false;
    const repeated = claimed.has(key);
    claimed.add(key);
    return repeated;
  });
}

/**
 * The items of a POST /{resource}/batch without `upsertBy` that will create (all but those with `ifMatch`, a
 * 412 with no holder), prepared before its transaction (prepareMany). An upsert's items are prepared in it:
 * which of them create is known there only, and a probe outside as well would cost its updates more.
 */
export async function prepareCreates<R, P>(spec: BatchResource<R, P>, db: Executor, caller: Caller, params: P, items: Item[], by: UpsertKey | undefined): Promise<Map<Item, unknown>> {
  const prepared = new Map<Item, unknown>();
  const creates = items.filter((item) => item.ifMatch === undefined);
  if (by !== undefined || !spec.prepareMany || !spec.createMany || creates.length === 0) return prepared;
  (await spec.prepareMany(db, caller, params, creates.map((item) => item.input))).forEach((p, k) => prepared.set(creates[k]!, p));
  return prepared;
}

/**
 * POST /{resource}/batch in the caller's transaction, with as few statements as the resource allows: the keys
 * of every item locked (PostgreSQL), so that a concurrent write of the same new key has committed before this
 * batch probes for it, or waits for this one; one probe for every item's upsert key; the rows of the hits
 * locked in one statement (PostgreSQL); the items that only create through the resource's bulk create, the
 * hits through its bulk update. An item whose key an earlier item of the batch already names runs alone, after
 * the items before it, in its own savepoint (as does every item of a resource without the bulk operations), so
 * that it finds what the earlier ones wrote, as if the items had been sent one by one: two items upserting one
 * new key create it, then update it.
 */
export async function runCreateBatch<R, P>(
  spec: BatchResource<R, P>,
  run: BatchRun<P>,
  items: Item[],
  by: UpsertKey | undefined,
  prepared: ReadonlyMap<Item, unknown> = new Map(),
): Promise<BatchItemResult<R>[]> {
  await lockKeys(run.trx, () => spec.lockKeys(run.caller, run.params, items.map((i) => i.input)));
  const keys = items.map((item) => (by ? keyOf(item.input, by) : undefined));
  const holders = by ? await spec.holdersOf(run.trx, run.caller, run.params, by, keys.filter((k): k is string => k !== undefined)) : new Map<string, ExternalIdHolder>();
  await lockRows(run.trx, run.dialect, spec.table, run.caller.organizationId, [...holders.values()].flatMap((h) => (h.trashed ? [] : [h.id])));
  const results: BatchItemResult<R>[] = [];
  // Stretches of items that can be written in bulk, cut at each item that must run alone (its key named by an
  // earlier item); within one, the bulk updates go first (they never write what a create probes: contacts and
  // external ids), then the creates and the updates the bulk one left (a contact or external id change), in
  // the order of the batch, each such update cutting the creates in two: a later create sees what it wrote.
  let stretch: { creates: Item[]; updates: { item: Item; id: string }[] } = { creates: [], updates: [] };
  const writeStretch = async () => {
    const updated = await updateInBulk(spec, run, stretch.updates);
    results.push(...updated.results);
    const leftovers = new Set<Item>(updated.alone);
    let creates: Item[] = [];
    for (const item of [...stretch.creates, ...updated.alone].sort((a, b) => a.index - b.index)) {
      if (!leftovers.has(item)) {
        creates.push(item);
        continue;
      }
      results.push(...(await createInBulk(spec, run, creates, prepared)));
      creates = [];
      results.push(...(await runAlone(run, [item], (i) => upsertOne(spec, run, i, by))));
    }
    results.push(...(await createInBulk(spec, run, creates, prepared)));
    stretch = { creates: [], updates: [] };
  };
  const repeated = repeatedKeys(keys);
  for (const [k, item] of items.entries()) {
    const key = keys[k];
    const holder = key === undefined ? undefined : holders.get(key);
    if (repeated[k] || (holder && !holder.trashed && !spec.updateMany) || (!holder && item.ifMatch === undefined && !spec.createMany)) {
      await writeStretch();
      results.push(...(await runAlone(run, [item], (i) => upsertOne(spec, run, i, by))));
    } else if (holder?.trashed) results.push(outcomeOf(item.index, externalIdTaken(spec.noun)));
    else if (holder) stretch.updates.push({ item, id: holder.id });
    else if (item.ifMatch !== undefined) results.push(outcomeOf(item.index, PreconditionFailed.noHolder(spec.noun, by)));
    else stretch.creates.push(item);
  }
  await writeStretch();
  return results;
}

/** Hands `creates` to the resource's bulk create: a result for each. */
async function createInBulk<R, P>(spec: BatchResource<R, P>, run: BatchRun<P>, creates: Item[], prepared: ReadonlyMap<Item, unknown>): Promise<BatchItemResult<R>[]> {
  if (creates.length === 0) return [];
  const created = await spec.createMany!(run.trx, run.caller, run.params, creates.map((i) => i.input), creates.map((i) => prepared.get(i)));
  return created.map((outcome, k) => (outcome instanceof AppError ? outcomeOf<R>(creates[k]!.index, outcome) : { index: creates[k]!.index, status: 201, resource: outcome }));
}

/**
 * PATCH /{resource}/batch: the keys the items set (e-mails, phones, external ids), then the items' rows locked
 * first, in one statement each (PostgreSQL), so that each ifMatch is compared with the version its write
 * replaces, as a single PATCH does; then the resource's bulk update, or each item in its own savepoint (an id
 * named twice: the later items, after the first).
 */
export async function runUpdateBatch<R, P>(spec: BatchResource<R, P>, run: BatchRun<P>, items: UpdateItem[]): Promise<BatchItemResult<R>[]> {
  const { trx, caller, params } = run;
  await lockKeys(trx, () => spec.lockKeys(caller, params, items.map((i) => i.input)));
  await lockRows(trx, run.dialect, spec.table, caller.organizationId, items.map((i) => i.id));
  const seen = new Set<string>();
  const updates: { item: UpdateItem; id: string }[] = [];
  const alone: UpdateItem[] = [];
  for (const item of items) {
    (spec.updateMany && !seen.has(item.id) ? updates.push({ item, id: item.id }) : alone.push(item));
    seen.add(item.id);
  }
  const updated = await updateInBulk(spec, run, updates);
  const apply = async (item: UpdateItem): Promise<BatchItemResult<R>> => {
    if (item.ifMatch !== undefined) {
      const current = await spec.find(trx, caller, params, item.id);
      if (current === undefined) throw notFound(spec.label);
      versionCheck(run, item.ifMatch, current);
    }
    return { index: item.index, status: 200, resource: await spec.update(trx, caller, params, item.id, item.input, KEYS_LOCKED) };
  };
  return [...updated.results, ...(await runAlone(run, [...alone, ...updated.alone], apply))];
}

/** Every item's result, in the order of the items. */
export function inOrder<R>(...parts: BatchItemResult<R>[][]): BatchItemResult<R>[] {
  return parts.flat().sort((a, b) => a.index - b.index);
}

/**
 * What a resource whose only key is its external id (accounts, deals: unique per organization) hands the runner:
 * the key it upserts by, its table, the keys a batch locks and the holders an upsert finds.
 */
export function keyedByExternalId(table: 'accounts' | 'deals'): Pick<BatchResource<unknown, unknown>, 'upsertBy' | 'table' | 'lockKeys' | 'holdersOf'> {
  return {
    upsertBy: ['externalId'],
    table,
    lockKeys: (caller, _params, inputs) => externalIdKeys(table, caller.organizationId, inputs),
    holdersOf: (db, caller, _params, _by, values) => externalIdHolders(db, table, { column: 'organization_id', value: caller.organizationId }, values),
  };
}
