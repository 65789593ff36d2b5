import { closeSync, openSync, readSync } from 'node:fs';
import { endianness } from 'node:os';
import { once } from 'node:events';
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../lib/worker-thread.js';
import type { CheckpointWorkerData } from './wal-checkpoint-worker.js';
import type { WriteLock } from './write-lock.js';

/**
 * Where the WAL index (the `-shm` file) keeps what is written and what is copied (sqlite.org/walformat.html):
 * the header's `iVersion` and `mxFrame` (frames in the WAL), then, after the header's two copies, the checkpoint
 * information's `nBackfill` (frames already copied into the database file). In the machine's byte order.
 */
const INDEX_VERSION = 3007000;
const VERSION_AT = 0;
const FRAMES_AT = 16;
const BACKFILLED_AT = 96;
const READ_BYTES = 100;

/**
 * Frames written and not yet copied at which a commit asks for a checkpoint in the background (8 MB of 4 KB
 * pages). The first commit after a complete copy rewinds the WAL. The writing connection's own automatic
 * checkpoint (database.ts) stays as the bound: should the worker fall behind or fail, that commit copies the rest.
 */
export const BACKGROUND_CHECKPOINT_FRAMES = 2_000;

/**
 * Frames in the WAL (32 MB of 4 KB pages) at which the worker copies the last few under the write lock so that the
 * next commit rewinds it (wal-checkpoint-worker.ts). Each rewind costs the commit that does it a sync of the new
 * WAL header: a longer WAL pays it less often. Under a steady stream of batches the WAL holds 12,000–18,000 frames
 * when it rewinds (it grows while the passive copy runs): within database.ts's journal_size_limit, so that commit
 * truncates nothing (a truncation of ~100 MB took ~20 ms).
 */
export const REWIND_FRAMES = 8_000;

/**
 * WAL checkpoints of a SQLite file on a worker thread with its own connection, so that their copy and their two
 * fsyncs no longer run inside whichever commit crosses the automatic threshold, on the thread serving requests
 * (60–70 ms every ~25 batches of 100 new leads; 13–17 % of that thread's time in `POST /leads/batch`). After each
 * commit, `committed()` reads the WAL index's counters (one 100-byte read) and, past the threshold, asks the worker
 * for a passive checkpoint (which never waits for readers or writers) unless one is running. The worker starts on
 * first use: a database that never writes that much never starts one.
 */
export class WalCheckpointer {
  private index: number | undefined;
  private unavailable = false;
  private worker: Worker | undefined;
  private running = false;
  private readonly header = Buffer.alloc(READ_BYTES);
  private readonly read = endianness() === 'LE' ? this.header.readUInt32LE.bind(this.header) : this.header.readUInt32BE.bind(this.header);

  constructor(
    private readonly file: string,
    private readonly opts: { frames?: number; rewindFrames?: number; lock?: WriteLock } = {},
  ) {}

  /**
   * After a commit: starts a background checkpoint when enough frames wait for one and none is running. Never
   * throws (the commit has succeeded): a worker that can't start leaves the checkpoints to SQLite's own.
   */
  committed(): void {
    if (this.running) return;
    const waiting = this.framesWaiting();
    if (waiting === undefined || waiting < (this.opts.frames ?? BACKGROUND_CHECKPOINT_FRAMES)) return;
    try {
      this.started().postMessage('checkpoint');
      this.running = true;
    } catch {
      this.unavailable = true;
    }
  }

  /** Frames in the WAL not yet copied into the database file; undefined when the index can't be read. */
  framesWaiting(): number | undefined {
    if (this.unavailable) return undefined;
    try {
      this.index ??= openSync(`${this.file}-shm`, 'r');
      if (readSync(this.index, this.header, 0, READ_BYTES, 0) < READ_BYTES || this.read(VERSION_AT) !== INDEX_VERSION) return undefined;
    } catch {
      // No WAL index to read (another journal mode): SQLite's automatic checkpoints do the work alone.
      this.unavailable = true;
      return undefined;
    }
    return this.read(FRAMES_AT) - this.read(BACKFILLED_AT);
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    if (worker) {
      // Its connection closes before the caller's, which then stays the last one and may remove the WAL. Held
      // meanwhile: an unreferenced worker's exit would not keep the process alive until the caller is told.
      worker.ref();
      const exited = once(worker, 'exit');
      worker.postMessage('close');
      await exited;
    }
    if (this.index !== undefined) closeSync(this.index);
    this.index = undefined;
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const data: CheckpointWorkerData = { file: this.file, rewindFrames: this.opts.rewindFrames ?? REWIND_FRAMES, ...(this.opts.lock && { lock: this.opts.lock.buffer }) };
    const worker = startWorker(import.meta.url, 'wal-checkpoint-worker', data);
    // An idle checkpointer must not keep the process alive.
    worker.unref();
    worker.on('message', () => (this.running = false));
    const lost = () => {
      if (this.worker === worker) this.worker = undefined;
      this.running = false;
    };
    // A failed worker is replaced at the next checkpoint; meanwhile the automatic checkpoints bound the WAL.
    worker.on('error', lost);
    worker.on('exit', lost);
    this.worker = worker;
    return worker;
  }
}
