/**
 * One SQLite writer at a time among the threads of one server process (HTTP_THREADS), in shared memory.
 * Each thread has its own connection; two `BEGIN IMMEDIATE`s at once would leave one in SQLite's busy
 * handler, which sleeps the whole thread (1, 2, 5… ms) with its event loop. Waiting here is asynchronous:
 * the thread goes on serving reads, and its group commit gathers more work, until the lock is free. Other
 * processes (`crm` commands, workers) still meet SQLite's own lock and busy_timeout.
 */
export class WriteLock {
  private readonly cell: Int32Array;

  /** `buffer`: the same SharedArrayBuffer in every thread (new one for a single thread). */
  constructor(readonly buffer: SharedArrayBuffer = new SharedArrayBuffer(4)) {
    this.cell = new Int32Array(buffer);
  }

  async acquire(): Promise<void> {
    while (Atomics.compareExchange(this.cell, 0, 0, 1) !== 0) {
      const wait = Atomics.waitAsync(this.cell, 0, 1);
      if (wait.async) await wait.value;
    }
  }

  /**
   * Blocks the calling thread until the lock is free: for a worker thread that serves nothing else. Each wait is
   * bounded, so that a release whose wake-up went to another waiter is seen anyway.
   */
  acquireBlocking(): void {
    while (Atomics.compareExchange(this.cell, 0, 0, 1) !== 0) Atomics.wait(this.cell, 0, 1, 50);
  }

  release(): void {
    Atomics.store(this.cell, 0, 0);
    Atomics.notify(this.cell, 0, 1);
  }
}
