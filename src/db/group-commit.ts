import { sql, type Kysely, type Transaction } from 'kysely';
import type { DB } from './schema.js';
import type { WriteLock } from './write-lock.js';

interface Unit {
  fn: (trx: Transaction<DB>) => Promise<unknown>;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

export interface GroupCommitOptions {
  /** Taken around every batch when other threads of the process write to the same file. */
  lock?: WriteLock;
  /** Most transactions folded into one commit. */
  maxUnits?: number;
  /** A batch stops taking new work after this long, so no caller waits behind an endless stream. */
  maxBatchMs?: number;
  /** Called after each good COMMIT, before its callers are answered. */
  afterCommit?: () => void;
}

/**
 * Group commit for SQLite. A commit costs far more than the writes of one API call (WAL frames, and every
 * thousandth page a checkpoint), and SQLite has one writer anyway. Transactions requested in the same turn
 * of the event loop share one `BEGIN IMMEDIATE … COMMIT`; each runs inside its own savepoint, so one that
 * fails is rolled back alone and rejects alone. Nobody is answered before the shared COMMIT succeeds: if it
 * fails, every transaction of the batch fails. The result is what running them one after another would
 * give, in arrival order.
 */
export class GroupCommit {
  private readonly queue: Unit[] = [];
  private scheduled = false;
  private open = false;
  private readonly maxUnits: number;
  private readonly maxBatchMs: number;
  private readonly lock: WriteLock | undefined;
  private readonly afterCommit: () => void;

  constructor(
    private readonly db: Kysely<DB>,
    opts: GroupCommitOptions = {},
  ) {
    this.maxUnits = opts.maxUnits ?? 128;
    this.maxBatchMs = opts.maxBatchMs ?? 20;
    this.lock = opts.lock;
    this.afterCommit = opts.afterCommit ?? (() => undefined);
  }

  /** True while a batch's transaction is open or transactions wait for one (not once its callers are being answered). */
  get pending(): boolean {
    return this.open || this.queue.length > 0;
  }

  run<T>(fn: (trx: Transaction<DB>) => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, resolve: resolve as (value: unknown) => void, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.queue.length === 0) return;
    this.scheduled = true;
    // After the current I/O phase, so every request that arrived with this one joins its batch.
    setImmediate(() => {
      void this.flush().finally(() => {
        this.scheduled = false;
        this.schedule();
      });
    });
  }

  /**
   * One batch under the write lock (if any). Callers are answered only after the lock is released: their
   * continuations (serializing and sending responses) would otherwise run while other threads wait for it.
   */
  private async flush(): Promise<void> {
    await this.lock?.acquire();
    let settle: () => void;
    this.open = true;
    try {
      settle = await this.commitBatch();
    } finally {
      this.open = false;
      this.lock?.release();
    }
    settle();
  }

  /** Runs a batch; returns what answers its callers (resolved after a good COMMIT, rejected otherwise). */
  private async commitBatch(): Promise<() => void> {
    const done: { unit: Unit; value: unknown }[] = [];
    const failed: { unit: Unit; err: unknown }[] = [];
    const rejectFailed = () => failed.forEach(({ unit, err }) => unit.reject(err));
    let trx: Awaited<ReturnType<ReturnType<Kysely<DB>['startTransaction']>['execute']>>;
    try {
      trx = await this.db.startTransaction().execute();
    } catch (err) {
      const units = this.queue.splice(0);
      return () => units.forEach((unit) => unit.reject(err));
    }
    const started = Date.now();
    let current: Unit | undefined = this.queue.shift()!;
    // The first unit is alone in the transaction so far: no savepoint (two statements saved per batch, and
    // SQLite's savepoint bookkeeping over a bulk write); if it fails, rolling everything back undoes just it,
    // and the units still queued go to the next batch.
    try {
      done.push({ unit: current, value: await current.fn(trx) });
    } catch (err) {
      await trx.rollback().execute().catch(() => undefined);
      const unit = current;
      return () => unit.reject(err);
    }
    current = undefined;
    try {
      while (this.queue.length > 0 && done.length < this.maxUnits && Date.now() - started < this.maxBatchMs) {
        current = this.queue.shift()!;
        await sql`savepoint unit`.execute(trx);
        try {
          const value = await current.fn(trx);
          await sql`release unit`.execute(trx);
          done.push({ unit: current, value });
        } catch (err) {
          // If this rollback fails, SQLite has already ended the whole transaction (disk full, I/O error):
          // the outer catch then fails the batch.
          await sql`rollback to unit`.execute(trx);
          await sql`release unit`.execute(trx);
          failed.push({ unit: current, err });
        }
        current = undefined;
      }
      await trx.commit().execute();
      this.afterCommit();
    } catch (err) {
      await trx.rollback().execute().catch(() => undefined);
      const lost = [...done.map((d) => d.unit), ...(current ? [current] : [])];
      return () => {
        rejectFailed();
        lost.forEach((unit) => unit.reject(err));
      };
    }
    return () => {
      rejectFailed();
      done.forEach(({ unit, value }) => unit.resolve(value));
    };
  }
}
