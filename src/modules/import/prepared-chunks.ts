import type { Worker } from 'node:worker_threads';
import type { Clock } from '../../lib/clock.js';
import type { ChunkRequest, PreparedChunk } from './csv-worker.js';

/**
 * Rows of the first chunk; each next one is twice as large up to the full size. The worker needs a head start
 * (it loads its modules, then runs cold), so the main thread starts storing small chunks rather than waiting for
 * a full one.
 */
const FIRST_CHUNK_ROWS = 500;

/**
 * The chunks a worker thread prepares, in file order. The worker works on at most `ahead` chunks the main
 * thread has not taken yet, so it prepares the next chunk while this one is stored, and memory stays
 * bounded whatever the file's size. A worker that fails or stops early ends the iteration with an error.
 */
export class PreparedChunks implements AsyncIterable<PreparedChunk> {
  private readonly ready: PreparedChunk[] = [];
  private failure: Error | null = null;
  private lastArrived = false;
  private wake: (() => void) | null = null;
  private nextRows = FIRST_CHUNK_ROWS;

  constructor(
    private readonly worker: Worker,
    private readonly clock: Clock,
    private readonly chunkRows: number,
    ahead = 2,
  ) {
    worker.on('message', (chunk: PreparedChunk) => {
      this.lastArrived = chunk.last;
      this.ready.push(chunk);
      this.notify();
    });
    worker.on('error', (err) => this.fail(err));
    worker.on('exit', (code) => {
      if (!this.lastArrived) this.fail(new Error(`the import worker stopped before the end of the file (exit code ${code})`));
    });
    for (let i = 0; i < ahead; i++) this.request();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<PreparedChunk> {
    while (true) {
      while (this.ready.length === 0 && this.failure === null) await new Promise<void>((resolve) => (this.wake = resolve));
      const chunk = this.ready.shift();
      if (chunk === undefined) throw this.failure!;
      if (!chunk.last) this.request();
      yield chunk;
      if (chunk.last) return;
    }
  }

  /** Ends the worker (a no-op once it has finished). */
  async stop(): Promise<void> {
    this.lastArrived = true;
    await this.worker.terminate();
  }

  private request(): void {
    const request: ChunkRequest = { rows: Math.min(this.nextRows, this.chunkRows), now: this.clock.now().toISOString() };
    this.nextRows *= 2;
    this.worker.postMessage(request);
  }

  private fail(err: Error): void {
    this.failure ??= err;
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }
}
