import { parentPort, workerData } from 'node:worker_threads';
import SqliteDatabase from 'better-sqlite3';

/**
 * The worker thread of wal-checkpointer.ts: its own connection to the file, and a passive checkpoint each time
 * it is asked (copy what readers no longer need, fsync; never wait for readers or writers, and return at once when
 * another checkpoint holds the lock). Each request is answered once the checkpoint is over, failed or not: the
 * automatic checkpoints of the writing connection remain the bound either way.
 */
export interface CheckpointWorkerData {
  file: string;
}

const { file } = workerData as CheckpointWorkerData;
const db = new SqliteDatabase(file, { fileMustExist: true });
const port = parentPort!;

port.on('message', (message: 'checkpoint' | 'close') => {
  if (message === 'close') {
    db.close();
    port.close();
    return;
  }
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } finally {
    port.postMessage('done');
  }
});
