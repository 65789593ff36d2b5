import { parentPort, workerData } from 'node:worker_threads';
import SqliteDatabase from 'better-sqlite3';
import { WriteLock } from './write-lock.js';

/**
 * The worker thread of wal-checkpointer.ts: its own connection to the file, and a passive checkpoint each time
 * it is asked (copy what readers no longer need, fsync; never wait for readers or writers, and return at once when
 * another checkpoint holds the lock). Each request is answered once the checkpoint is over, failed or not: the
 * automatic checkpoints of the writing connection remain the bound either way.
 *
 * A passive copy never lets the WAL rewind under a steady stream of commits: each one appends frames while it
 * copies, and SQLite rewinds only for a writer that begins when every frame is copied. So once the WAL holds
 * `rewindFrames`, the worker takes the process's write lock (`lock`: the one the group commit takes) and copies
 * the few frames committed since its passive copy: the next commit then rewinds the WAL. The writers' own
 * automatic checkpoint, far beyond that, used to be what rewound it, copying thousands of frames and syncing
 * twice inside a commit while every writer waited.
 */
export interface CheckpointWorkerData {
  file: string;
  /** The process's write lock (db/write-lock.ts), when the writers take one. */
  lock?: SharedArrayBuffer;
  rewindFrames: number;
}

const { file, lock, rewindFrames } = workerData as CheckpointWorkerData;
const db = new SqliteDatabase(file, { fileMustExist: true });
const port = parentPort!;
const writers = lock ? new WriteLock(lock) : undefined;

/** One row: whether another checkpoint was running, the frames in the WAL, the frames copied so far. */
const checkpoint = () => db.pragma('wal_checkpoint(PASSIVE)', { simple: false }) as [{ busy: number; log: number; checkpointed: number }];

port.on('message', (message: 'checkpoint' | 'close') => {
  if (message === 'close') {
    db.close();
    port.close();
    return;
  }
  try {
    const [{ log }] = checkpoint();
    if (writers && log >= rewindFrames) {
      // The writers wait asynchronously meanwhile; this copy never waits for anything itself.
      writers.acquireBlocking();
      try {
        checkpoint();
      } finally {
        writers.release();
      }
    }
  } finally {
    port.postMessage('done');
  }
});
