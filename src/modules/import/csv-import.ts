import { createReadStream, statSync } from 'node:fs';
import type { TSchema } from '@sinclair/typebox';
import { parse } from 'csv-parse';
import type { AppContext } from '../../context.js';
import type { Executor } from '../../db/database.js';
import { inTransaction } from '../../db/transaction.js';
import { AppError, type FieldError } from '../../errors.js';
import { validateValue } from '../../http/validation.js';
import type { Actor } from '../orgs/principal.js';

/** How one resource is imported: its create schema, how CSV text becomes typed values, and its batch create. */
export interface ImportAdapter {
  resource: string;
  schema: TSchema;
  /** CSV cells are text: turn a row's non-empty cells into the JSON the create schema expects. */
  fromCsv(cells: Record<string, string>): Record<string, unknown>;
  /** Creates a batch in one transaction with the same rules, encryption and events as the API. */
  createMany(trx: Executor, caller: { organizationId: string; actor: Actor }, inputs: unknown[]): Promise<unknown[]>;
}

export interface RowError {
  /** Line number in the file (the header is line 1). */
  line: number;
  errors: FieldError[];
}

export interface ImportReport {
  resource: string;
  rows: number;
  imported: number;
  failed: RowError[];
  allOrNothing: boolean;
  seconds: number;
}

export interface ImportOptions {
  file: string;
  organizationId: string;
  adapter: ImportAdapter;
  allOrNothing: boolean;
  batchSize?: number;
  onProgress?: (bytesRead: number, totalBytes: number) => void;
}

/** The importer's actor in events: a system write over the API's rules (documented in docs/import.md). */
export const IMPORT_ACTOR: Actor = { type: 'SYSTEM', id: 'import', channel: 'API' };

interface Parsed {
  line: number;
  input: Record<string, unknown>;
}

/**
 * Streams a CSV file (header row = field names), validates every row against the create schema, and
 * creates the good rows in batches. A row that fails is reported with its line number and every reason;
 * with `allOrNothing` any failure means nothing is written (one transaction for the whole file).
 */
export async function importCsv(ctx: AppContext, opts: ImportOptions): Promise<ImportReport> {
  const started = Date.now();
  const totalBytes = statSync(opts.file).size;
  const batchSize = opts.batchSize ?? 2000;
  const caller = { organizationId: opts.organizationId, actor: IMPORT_ACTOR };
  const failed: RowError[] = [];
  const pending: Parsed[] = [];
  let imported = 0;
  let rows = 0;

  const flush = async (trx: Executor | null) => {
    const batch = pending.splice(0, pending.length);
    if (batch.length > 0) imported += await createBatch(ctx, trx, opts.adapter, caller, batch, failed, opts.allOrNothing);
  };

  const run = async (trx: Executor | null) => {
    const parser = createReadStream(opts.file).pipe(parse({ bom: true, skip_empty_lines: true, relax_column_count: true, info: true }));
    let header: string[] | null = null;
    for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
      if (header === null) {
        header = record.map((h) => h.trim());
        continue;
      }
      rows += 1;
      const row = parseRow(opts.adapter, header, record, info.lines);
      if ('errors' in row) failed.push(row);
      else pending.push(row);
      if (pending.length >= batchSize) {
        await flush(trx);
        opts.onProgress?.(parser.info.bytes, totalBytes);
      }
    }
    await flush(trx);
    opts.onProgress?.(totalBytes, totalBytes);
  };

  if (opts.allOrNothing) {
    try {
      await inTransaction(ctx, async (trx) => {
        await run(trx);
        if (failed.length > 0) throw new AppError('VALIDATION_FAILED', `${failed.length} row(s) are invalid; nothing was imported`);
      });
    } catch (err) {
      if (!(err instanceof AppError) || failed.length === 0) throw err;
      imported = 0;
    }
  } else {
    await run(null);
  }
  return { resource: opts.adapter.resource, rows, imported, failed: failed.sort((a, b) => a.line - b.line), allOrNothing: opts.allOrNothing, seconds: (Date.now() - started) / 1000 };
}

function parseRow(adapter: ImportAdapter, header: string[], record: string[], line: number): Parsed | RowError {
  if (record.length !== header.length) {
    return { line, errors: [{ field: 'row', code: 'invalid_format', message: `has ${record.length} cells; the header has ${header.length}` }] };
  }
  const cells: Record<string, string> = {};
  header.forEach((name, i) => {
    if (record[i]!.trim() !== '') cells[name] = record[i]!;
  });
  const input = adapter.fromCsv(cells);
  const errors = validateValue(adapter.schema, input, 'row');
  return errors.length > 0 ? { line, errors } : { line, input };
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
  batch: Parsed[],
  failed: RowError[],
  allOrNothing: boolean,
): Promise<number> {
  let remaining = batch;
  while (remaining.length > 0) {
    try {
      const inputs = remaining.map((r) => r.input);
      const created = trx ? await adapter.createMany(trx, caller, inputs) : await inTransaction(ctx, (t) => adapter.createMany(t, caller, inputs));
      return created.length;
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

/**
 * A batch create for resources whose service creates one at a time: rows run in order in the batch's
 * transaction; a refused row's field errors are prefixed with its index so the importer reports it and
 * retries the rest of the batch without it.
 */
export function oneByOne<I, O>(create: (trx: Executor, caller: { organizationId: string; actor: Actor }, input: I) => Promise<O>): ImportAdapter['createMany'] {
  return async (trx, caller, inputs) => {
    const created: O[] = [];
    for (const [i, input] of inputs.entries()) {
      try {
        created.push(await create(trx, caller, input as I));
      } catch (err) {
        if (err instanceof AppError && err.errors) {
          throw new AppError(err.code, err.message, { errors: err.errors.map((e) => ({ ...e, field: `${i}.${e.field}` })) });
        }
        throw err;
      }
    }
    return created;
  };
}
