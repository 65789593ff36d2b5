// Attempt results are written in batches, off the send path: whatever finished within a few milliseconds goes
// in one transaction, one write at a time. The receiver already has its delivery; only the log waits.

import type { Db } from '../../db/database.js';
import type { Clock } from '../../lib/clock.js';
import { recordOutcomes, type Outcome } from './dispatcher.work.js';

/** How long results gather before a write: batches of several results instead of one transaction each. */
const GATHER_MS = 5;

interface Log {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export class OutcomeWriter {
  private pending: Outcome[] = [];
  private writing: Promise<void> | null = null;
  private queued = false;

  constructor(private readonly db: Db, private readonly clock: Clock, private readonly log: Log) {}

  record(outcome: Outcome): void {
    this.pending.push(outcome);
    this.schedule(GATHER_MS);
  }

  /** True while results wait to be written or are being written. */
  get busy(): boolean {
    return this.pending.length > 0 || this.writing !== null || this.queued;
  }

  /** The write in progress, if any. */
  get current(): Promise<void> | null {
    return this.writing;
  }

  private schedule(delayMs: number): void {
    if (this.queued) return;
    this.queued = true;
    setTimeout(() => void this.flush(), delayMs).unref();
  }

  private async flush(): Promise<void> {
    this.queued = false;
    if (this.writing || this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    let failed = false;
    this.writing = recordOutcomes(this.db, batch, this.clock.now())
      .then((disabled) => {
        for (const d of disabled) this.log.warn({ webhookId: d.id, reason: d.reason }, 'webhook endpoint disabled');
      })
      .catch((err: unknown) => {
        // Keep the results and try again shortly; meanwhile the leases keep other workers off these rows.
        failed = true;
        this.log.error({ err }, 'recording webhook results failed');
        this.pending.unshift(...batch);
      })
      .finally(() => {
        this.writing = null;
      });
    await this.writing;
    if (this.pending.length > 0) this.schedule(failed ? 1_000 : GATHER_MS);
  }
}
