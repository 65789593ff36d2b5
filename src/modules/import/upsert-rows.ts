import type { AppContext } from '../../context.js';
import type { EntityTagger } from '../../crypto/entity-tag.js';
import type { Executor } from '../../db/database.js';
import { AppError } from '../../errors.js';
import { MAX_BATCH_ITEMS, type UpsertKey } from '../shared/batch.schemas.js';
import { checkCreateItems, inOrder, runCreateBatch, type BatchItemResult, type BatchResource } from '../shared/batch.service.js';
import type { Caller } from '../shared/caller.js';
import type { PreparedRow, RowError } from './row-preparers.js';

/** What an upserted row did: created an item, changed the item holding its key, or found it as the row has it already. */
export type RowOutcome = 'created' | 'updated' | 'unchanged';

/** A row written by an upsert: its line in the file, what it did, and the item's id. */
export interface UpsertedRow {
  line: number;
  outcome: RowOutcome;
  id: string;
}

/** The resource in the batch runner (POST /{resource}/batch) and the path it runs under (records: `{object}`). */
export interface BatchTarget {
  resource: BatchResource<unknown, unknown>;
  params: unknown;
}

/**
 * `crm import --upsert-by`: rows written as the items of `POST /{resource}/batch` with `upsertBy` are, by the
 * same runner, 100 at a time (MAX_BATCH_ITEMS) in the caller's transaction: each checked by checkCreateItems
 * (the upsert key is required), then runCreateBatch matches it (the holder of its external id, trashed or not,
 * or the oldest live lead with its e-mail), locks what it matches, updates the holder with the row's columns
 * or creates an item, each in its own savepoint with its events. A refused row is reported by its line; the
 * others land.
 */
export class RowUpserter {
  private readonly unchanged = new WeakSet<object>();
  private readonly resource: BatchResource<unknown, unknown>;

  constructor(
    private readonly ctx: Pick<AppContext, 'database' | 'entityTagger'>,
    private readonly target: BatchTarget,
    private readonly by: UpsertKey,
  ) {
    this.resource = watchingUpdates(target.resource, ctx.entityTagger, this.unchanged);
  }

  async write(trx: Executor, caller: Caller, rows: readonly PreparedRow[]): Promise<{ written: UpsertedRow[]; failed: RowError[] }> {
    const written: UpsertedRow[] = [];
    const failed: RowError[] = [];
    const run = { trx, dialect: this.ctx.database.dialect, entityTagger: this.ctx.entityTagger, caller, params: this.target.params };
    for (let start = 0; start < rows.length; start += MAX_BATCH_ITEMS) {
      const batch = rows.slice(start, start + MAX_BATCH_ITEMS);
      const { valid, refused } = checkCreateItems(this.resource, batch.map((row) => row.item), this.by);
      for (const result of inOrder(refused, await runCreateBatch(this.resource, run, valid, this.by))) {
        const line = batch[result.index]!.line;
        if (result.error) failed.push({ line, errors: result.error.errors ?? [{ field: 'row', code: result.error.code, message: result.error.message }] });
        else written.push({ line, outcome: this.outcomeOf(result), id: (result.resource as { id: string }).id });
      }
    }
    return { written, failed };
  }

  private outcomeOf(result: BatchItemResult<unknown>): RowOutcome {
    if (result.status === 201) return 'created';
    return this.unchanged.has(result.resource as object) ? 'unchanged' : 'updated';
  }
}

/**
 * `spec` with its updates watched: an update that leaves its item as it was (the same ETag before and after, so
 * the row held nothing new, and no event was written) adds the resource it returns to `unchanged`, which the
 * runner hands on as that item's result. The API answers both 200; the import's report tells them apart. It
 * costs a read of the items before their update, in the transaction that has locked their rows, so the version
 * read is the one the update replaces: one per item updated alone, one per bulk update (`findMany`; a resource
 * without it has its updates run alone).
 */
function watchingUpdates<R, P>(spec: BatchResource<R, P>, tagger: EntityTagger, unchanged: WeakSet<object>): BatchResource<R, P> {
  const note = (before: R | undefined, after: R) => {
    if (before !== undefined && tagger.tagOf(before) === tagger.tagOf(after)) unchanged.add(after as object);
  };
  const { updateMany, findMany } = spec;
  return {
    ...spec,
    async update(trx, caller, params, id, patch, opts) {
      const before = await spec.find(trx, caller, params, id);
      const after = await spec.update(trx, caller, params, id, patch, opts);
      note(before, after);
      return after;
    },
    updateMany:
      updateMany &&
      findMany &&
      (async (trx, caller, params, items) => {
        const before = await findMany(trx, caller, params, items.map((item) => item.id));
        const outcomes = await updateMany(trx, caller, params, items);
        outcomes.forEach((outcome, k) => {
          if (outcome !== undefined && !(outcome instanceof AppError)) note(before.get(items[k]!.id), outcome);
        });
        return outcomes;
      }),
  };
}
