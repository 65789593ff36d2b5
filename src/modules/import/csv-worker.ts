import { createReadStream } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { CsvError, Parser } from 'csv-parse';
import { createBlindIndex } from '../../crypto/blind-index.js';
import { createFieldCipher } from '../../crypto/field-cipher.js';
import { csvError, type RecordEnd } from './csv-errors.js';
import { columnNames, createPreparer, prepareRow, unknownColumns, type PreparedRow, type PreparerRef, type RowError } from './row-preparers.js';

/**
 * The worker thread of `crm import`: reads the CSV file, validates every row and prepares it (for leads:
 * contact fields normalized and sealed), one chunk per request of the main thread, which meanwhile stores
 * the previous chunk. No database access here.
 */

/** What the main thread gives the worker. The keys only ever reach the cipher and the blind index. */
export interface WorkerInput {
  file: string;
  organizationId: string;
  /** The create schema as plain JSON Schema (validated by the same Ajv setup as API bodies). */
  schema: object;
  rows: PreparerRef;
  /** Rows are upserted (`--upsert-by`): validated as upsert items, left for the batch runner to prepare. */
  upsert: boolean;
  keys: { encryption: readonly string[]; blindIndex: Uint8Array };
}

/** A request for the next chunk: how many data rows to read, and the instant they are created at (the main thread's clock). */
export interface ChunkRequest {
  rows: number;
  now: string;
}

/** One chunk of the file, in file order. */
export interface PreparedChunk {
  now: string;
  prepared: PreparedRow[];
  failed: RowError[];
  /** Data rows read into this chunk, good and bad. */
  rows: number;
  /** The line the chunk ends on, and the bytes of the file read so far. */
  lastLine: number;
  bytesRead: number;
  /** True for the final chunk (it may be empty). */
  last: boolean;
}

/** A record's cells and the line it ends on. */
type CsvRecord = { record: string[]; lines: number };

const input = workerData as WorkerInput;
const port = parentPort!;

const requests: ChunkRequest[] = [];
let waiting: ((request: ChunkRequest) => void) | null = null;
const onRequest = (request: ChunkRequest) => {
  if (waiting) {
    const resolve = waiting;
    waiting = null;
    resolve(request);
  } else requests.push(request);
};
port.on('message', onRequest);
const nextRequest = () => (requests.length > 0 ? Promise.resolve(requests.shift()!) : new Promise<ChunkRequest>((resolve) => (waiting = resolve)));

const preparer = createPreparer(input.rows, {
  organizationId: input.organizationId,
  crypto: { cipher: createFieldCipher(input.keys.encryption), blindIndex: createBlindIndex(Buffer.from(input.keys.blindIndex)) },
}, input.upsert);

/** csv-parse's counts when the last complete record was read, to place an unclosed quote (updated in place). */
const lastRecord: RecordEnd = { lines: 0, empty_lines: 0 };

/**
 * csv-parse pushes each record the moment it completes, while its `info` counts the lines read so far: every
 * record goes out with the line it ends on. (An `on_record` hook gives the same numbers but builds an info
 * object per record, which took a third of csv-parse's time per row.)
 */
class LineNumberedParser extends Parser {
  override push(record: string[] | null): boolean {
    if (record === null) return super.push(null);
    lastRecord.lines = this.info.lines;
    lastRecord.empty_lines = this.info.empty_lines;
    const numbered: CsvRecord = { record, lines: this.info.lines };
    return super.push(numbered);
  }
}

const parser = createReadStream(input.file).pipe(new LineNumberedParser({ bom: true, skip_empty_lines: true, relax_column_count: true }));
const records = (parser as AsyncIterable<CsvRecord>)[Symbol.asyncIterator]();
/** The next record; a malformed file fails with what and where only (csv-parse's own error quotes the cell). */
const nextRecord = () =>
  records.next().catch((err: unknown) => {
    throw err instanceof CsvError ? csvError(err, lastRecord) : err;
  });
const first = await nextRecord();
const header = first.done ? [] : columnNames(first.value.record);
let lastLine = first.done ? 0 : first.value.lines;
const headerErrors = unknownColumns(preparer, input.schema, header);
// A header naming unknown fields is refused as its own line, and no row is read.
let done = Boolean(first.done) || headerErrors.length > 0;

while (true) {
  const request = await nextRequest();
  const at = new Date(request.now);
  const chunk: PreparedChunk = { now: request.now, prepared: [], failed: [], rows: 0, lastLine, bytesRead: 0, last: false };
  if (headerErrors.length > 0) chunk.failed.push({ line: lastLine, errors: headerErrors });
  while (!done && chunk.rows < request.rows) {
    const next = await nextRecord();
    if (next.done) {
      done = true;
      break;
    }
    chunk.rows += 1;
    lastLine = next.value.lines;
    const row = prepareRow(preparer, input.schema, header, next.value.record, lastLine, at);
    if ('errors' in row) chunk.failed.push(row);
    else chunk.prepared.push(row);
  }
  chunk.lastLine = lastLine;
  chunk.bytesRead = parser.info.bytes;
  chunk.last = done;
  port.postMessage(chunk);
  if (done) break;
}
port.off('message', onRequest);
