// Attempt results wait here for the dispatcher's next step, which writes everything gathered since the last
// one in a single transaction. The receiver already has its delivery; only the log waits. One write at a time.

import type { Clock } from '../../lib/clock.js';
import { recordOutcomes, type Outcome, type Transactions } from './dispatcher.work.js';

interface Log {
  warn(obj: object, msg: string): void;
}

export class OutcomeWriter {
  private pending: Outcome[] = [];
  private writing: Promise<void> | null = null;

  constructor(private readonly database: Transactions, private readonly clock: Clock, private readonly log: Log) {}

  record(outcome: Outcome): void {
    this.pending.push(outcome);
  }

  /** True while results wait to be written or are being written. */
  get busy(): boolean {
    return this.pending.length > 0 || this.writing !== null;
  }

  /**
   * Writes what has gathered, after the write in progress if there is one. When nothing is in progress the
   * transaction is requested before this returns, so steps started with it share its commit (SQLite). A failed
   * batch is kept for the next flush, and the error is thrown; meanwhile the leases keep other workers off its rows.
   */
  async flush(): Promise<void> {
    while (this.writing) await this.writing.catch(() => undefined);
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    this.writing = this.write(batch);
    try {
      await this.writing;
    } finally {
      this.writing = null;
    }
  }

  private async write(batch: Outcome[]): Promise<void> {
    try {
      const disabled = await recordOutcomes(this.database, batch, this.clock.now());
      for (const d of disabled) this.log.warn({ webhookId: d.id, reason: d.reason }, 'webhook endpoint disabled');
    } catch (err) {
      this.pending.unshift(...batch);
      throw err;
    }
  }
}
