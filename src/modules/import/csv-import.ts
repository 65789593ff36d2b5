import { statSync } from 'node:fs';
import type { TSchema } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import { loadBlindIndexKey } from '../../crypto/blind-index-key.store.js';
import type { Executor } from '../../db/database.js';
import { lockKeys, type LockKey } from '../../db/key-locks.js';
import { inTransaction } from '../../db/transaction.js';
import { AppError, type FieldError } from '../../errors.js';
import { startWorker } from '../../lib/worker-thread.js';
import type { Actor } from '../orgs/principal.js';
import type { UpsertKey } from '../shared/batch.schemas.js';
import type { WriteOptions } from '../shared/precondition.js';
import type { WorkerInput } from './csv-worker.js';
import { PreparedChunks } from './prepared-chunks.js';
import type { PreparedRow, PreparerRef, RowError } from './row-preparers.js';
import { RowUpserter, type BatchTarget, type RowOutcome, type UpsertedRow } from './upsert-rows.js';

/**
 * How one resource is imported: the worker half (which row preparer validates and prepares its rows) and
 * the batch create that stores prepared rows on the main thread.
 */
export interface ImportAdapter {
  resource: string;
  /** The API's create schema: every row is validated against it, with the same messages. */
  schema: TSchema;
  rows: PreparerRef;
  /** Stores a batch in one transaction with the same rules, encryption and events as the API. */
  createMany(trx: Executor, caller: { organizationId: string; actor: Actor }, items: unknown[], now: Date): Promise<void>;
  /** The resource in the batch runner, which upserts the rows with `upsertBy` (`--upsert-by`). */
  batch: BatchTarget;
}

export interface ImportReport {
  resource: string;
  rows: number;
  imported: number;
  failed: RowError[];
  allOrNothing: boolean;
  seconds: number;
  /** With `upsertBy`: the key, what each written row did (by line, with the item's id) and how many did what. */
  upsert?: { by: UpsertKey; outcomes: UpsertedRow[] } & Record<RowOutcome, number>;
}

export interface ImportOptions {
  file: string;
  organizationId: string;
  adapter: ImportAdapter;
  allOrNothing: boolean;
  /** Update the item holding a row's key instead of creating one, as POST /{resource}/batch with `upsertBy`. */
  upsertBy?: UpsertKey;
  batchSize?: number;
  onProgress?: (bytesRead: number, totalBytes: number) => void;
}

/**
 * Rows per transaction, once the first chunks (500, 1,000, …) have given the worker its head start. The
 * blind-index indexes are random, so a batch rewrites most of their pages at its commit whatever its size:
 * 10,000 rows per commit instead of 5,000 cut the time in COMMIT for 100,000 leads from 1.09 to 0.87 s.
 * A concurrent API write waits for the SQLite write lock about half a second at most (10,000 × ~45 µs).
 */
const BATCH_ROWS = 10000;


/** The importer's actor in events: a system write over the API's rules (documented in docs/import.md). */
export const IMPORT_ACTOR: Actor = { type: 'SYSTEM', id: 'import', channel: 'API' };

/**
 * Imports a CSV file (header row = field names). A worker thread reads, validates and prepares the rows a
 * chunk ahead while this thread creates the good rows of the previous chunk in one transaction (with
 * `upsertBy`, upserts them through the batch runner: upsert-rows.ts). A row that fails is reported with its
 * line number and every reason; with `allOrNothing` any failure means nothing is written (one transaction
 * for the whole file). If the worker or the database fails, the import stops with an error that says up to
 * which line rows were handled and how many landed.
 */
export async function importCsv(ctx: AppContext, opts: ImportOptions): Promise<ImportReport> {
  const started = Date.now();
  const totalBytes = statSync(opts.file).size;
  const caller = { organizationId: opts.organizationId, actor: IMPORT_ACTOR };
  const upserter = opts.upsertBy === undefined ? undefined : new RowUpserter(ctx, opts.adapter.batch, upsertKey(opts.adapter, opts.upsertBy));
  const failed: RowError[] = [];
  const outcomes: UpsertedRow[] = [];
  let imported = 0;
  let rows = 0;
  let handledThrough = 1;

  const workerInput: WorkerInput = {
    file: opts.file,
    organizationId: opts.organizationId,
    schema: opts.adapter.schema,
    rows: opts.adapter.rows,
    upsert: upserter !== undefined,
    keys: { encryption: ctx.config.encryptionKeys, blindIndex: await loadBlindIndexKey(ctx.database.db, ctx.cipher, ctx.clock.now()) },
  };
  const chunks = new PreparedChunks(startWorker(import.meta.url, 'csv-worker', workerInput), ctx.clock, opts.batchSize ?? BATCH_ROWS);

  const upsertBatch = upserter && (async (trx: Executor | null, batch: PreparedRow[]) => {
    const write = (t: Executor) => upserter.write(t, caller, batch);
    const { written, failed: refused } = trx ? await write(trx) : await inTransaction(ctx, write);
    failed.push(...refused);
    outcomes.push(...written);
    return written.length;
  });

  const run = async (trx: Executor | null) => {
    for await (const chunk of chunks) {
      rows += chunk.rows;
      failed.push(...chunk.failed);
      if (chunk.prepared.length > 0) {
        imported += upsertBatch
          ? await upsertBatch(trx, chunk.prepared)
          : await createBatch(ctx, trx, opts.adapter, caller, chunk.prepared, new Date(chunk.now), failed, opts.allOrNothing);
      }
      handledThrough = chunk.lastLine;
      opts.onProgress?.(chunk.last ? totalBytes : chunk.bytesRead, totalBytes);
    }
  };

  const runAll = async () => {
    if (!opts.allOrNothing) return run(null);
    try {
      await inTransaction(ctx, async (trx) => {
        await run(trx);
        if (failed.length > 0) throw new AppError('VALIDATION_FAILED', `${failed.length} row(s) are invalid; nothing was imported`);
      });
    } catch (err) {
      if (!(err instanceof AppError) || failed.length === 0) throw err;
      imported = 0;
      outcomes.length = 0;
    }
  };

  try {
    await runAll();
  } catch (err) {
    throw stopped(err, handledThrough, opts.allOrNothing ? null : imported);
  } finally {
    await chunks.stop();
  }
  const report: ImportReport = { resource: opts.adapter.resource, rows, imported, failed: failed.sort((a, b) => a.line - b.line), allOrNothing: opts.allOrNothing, seconds: (Date.now() - started) / 1000 };
  if (opts.upsertBy !== undefined) report.upsert = { by: opts.upsertBy, ...countOutcomes(outcomes), outcomes };
  return report;
}

/** `by` if the resource's batch upserts by it (e-mail: leads only), else the one-line refusal naming what it takes. */
function upsertKey(adapter: ImportAdapter, by: UpsertKey): UpsertKey {
  const keys = adapter.batch.resource.upsertBy;
  if (!keys.includes(by)) throw new AppError('VALIDATION_FAILED', `${adapter.resource} are upserted by ${keys.join(' or ')}, not by ${by}`);
  return by;
}

function countOutcomes(rows: readonly UpsertedRow[]): Record<RowOutcome, number> {
  const counts: Record<RowOutcome, number> = { created: 0, updated: 0, unchanged: 0 };
  for (const row of rows) counts[row.outcome] += 1;
  return counts;
}

/** The error of an import cut short: the cause, the last line handled, and what landed before it. */
function stopped(err: unknown, line: number, imported: number | null): Error {
  const landed = imported === null ? 'nothing was imported (--all-or-nothing)' : `${imported} row(s) up to that line were imported`;
  const message = `import stopped after line ${line}: ${err instanceof Error ? err.message : String(err)}; ${landed}`;
  return err instanceof AppError ? new AppError(err.code, message, { errors: err.errors }) : new Error(message, { cause: err });
}

/**
 * Creates a batch; when the service refuses some rows (e.g. an owner that is not a user — errors carry
 * the batch index as "3.ownerId"), those rows are reported and the rest retried, so good rows still land.
 */
async function createBatch(
  ctx: AppContext,
  trx: Executor | null,
  adapter: ImportAdapter,
  caller: { organizationId: string; actor: Actor },
  batch: PreparedRow[],
  now: Date,
  failed: RowError[],
  allOrNothing: boolean,
): Promise<number> {
  let remaining = batch;
  while (remaining.length > 0) {
    try {
      const items = remaining.map((r) => r.item);
      if (trx) await adapter.createMany(trx, caller, items, now);
      else await inTransaction(ctx, (t) => adapter.createMany(t, caller, items, now));
      return remaining.length;
    } catch (err) {
      if (!(err instanceof AppError) || !err.errors) throw err;
      const byRow = new Map<number, FieldError[]>();
      for (const e of err.errors) {
        const match = /^(\d+)\.(.+)$/.exec(e.field);
        const index = match ? Number(match[1]) : remaining.length === 1 ? 0 : -1;
        if (index < 0) throw err;
        byRow.set(index, [...(byRow.get(index) ?? []), { ...e, field: match ? match[2]! : e.field }]);
      }
      for (const [index, errors] of byRow) failed.push({ line: remaining[index]!.line, errors });
      if (allOrNothing) return 0;
      remaining = remaining.filter((_, i) => !byRow.has(i));
    }
  }
  return 0;
}

type ImportCaller = { organizationId: string; actor: Actor };

/**
 * A batch create for resources whose service creates one at a time: the keys of all rows locked first, in one
 * statement (db/key-locks.ts), then rows run in order in the batch's transaction; a refused row's field errors
 * are prefixed with its index so the importer reports it and retries the rest of the batch without it.
 */
export function oneByOne<I>(
  keys: (caller: ImportCaller, inputs: I[]) => LockKey[],
  create: (trx: Executor, caller: ImportCaller, input: I, opts: Pick<WriteOptions, 'keysLocked'>) => Promise<unknown>,
): ImportAdapter['createMany'] {
  return async (trx, caller, inputs) => {
    await lockKeys(trx, () => keys(caller, inputs as I[]));
    for (const [i, input] of inputs.entries()) {
      try {
        await create(trx, caller, input as I, { keysLocked: true });
      } catch (err) {
        if (err instanceof AppError && err.errors) {
          throw new AppError(err.code, err.message, { errors: err.errors.map((e) => ({ ...e, field: `${i}.${e.field}` })) });
        }
        throw err;
      }
    }
  };
}
