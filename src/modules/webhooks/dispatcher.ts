// The webhook dispatcher: outbox → delivery rows → signed HTTP attempts, with retries.
//
// Flow: a commit (ctx.outbox), a PostgreSQL NOTIFY or the poll timer wakes the pump. The pump fans new
// events out to delivery rows, leasing at once those whose endpoint has a free slot in this process, and
// refills free slots from due rows endpoint by endpoint. Each endpoint has its own concurrency limit, so a
// slow or dead endpoint only ever ties up its own slots. Results are written in batches, off the send path.
// No transaction is ever open across network I/O.

import { randomBytes } from 'node:crypto';
import type dns from 'node:dns';
import type { Agent } from 'undici';
import type { AppContext } from '../../context.js';
import { systemClock, type Clock } from '../../lib/clock.js';
import type { DeliveryOutcome } from '../../observability/metrics.js';
import { runAttempt, type AttemptDeps } from './dispatcher.attempt.js';
import type { DeliveryDecision } from './dispatcher.outcome.js';
import { claimDeliveries, endpointsWithDueDeliveries, type Job, type Lease } from './dispatcher.store.js';
import { fanOutBatch } from './dispatcher.work.js';
import { OutcomeWriter } from './dispatcher.writer.js';
import { createGuardedDispatcher } from './ssrf.js';
import { pruneDeliveryLog } from './webhooks.service.js';

export interface DispatcherLogger {
  debug(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface DispatcherOptions {
  /** How often due retries, other processes' events and expired leases are looked for. Default 1 s. */
  pollIntervalMs?: number;
  /**
   * Attempts in flight per endpoint in this process. Default 32: enough for 500 events/s to a receiver 60 ms
   * away, few enough that a dead endpoint only ties up its own 32 connections.
   */
  endpointConcurrency?: number;
  /** Attempts in flight in this process. Default 1024. */
  maxInFlight?: number;
  /** Events read per fan-out transaction. Default 500. */
  fanOutBatchSize?: number;
  /** Default config.webhooks.timeoutMs / allowPrivateNetworks. */
  timeoutMs?: number;
  allowPrivateNetworks?: boolean;
  /** DNS for the connect-time SSRF check (tests inject one). */
  lookup?: typeof dns.lookup;
  /** Jitter source for the retry schedule. */
  random?: () => number;
  /**
   * Clock for the signature timestamps. Receivers compare `t` with their own wall clock, so this stays the
   * real clock even when tests drive the business clock (ctx.clock) days ahead.
   */
  signingClock?: Clock;
  logger?: DispatcherLogger;
  /** How often the delivery log is pruned (30-day retention). Default 1 h. */
  pruneIntervalMs?: number;
}

type Ctx = Pick<AppContext, 'config' | 'database' | 'cipher' | 'clock' | 'outbox'> & Partial<Pick<AppContext, 'metrics'>>;

const silent: DispatcherLogger = { debug() {}, info() {}, warn() {}, error() {} };
/** An attempt's decision as the crm_webhook_deliveries_total{outcome} label. */
const DELIVERY_OUTCOMES = { SUCCEEDED: 'delivered', PENDING: 'retrying', FAILED: 'failed' } as const satisfies Record<DeliveryDecision['status'], DeliveryOutcome>;

/** Margin on top of the send timeout before another worker may take a claimed row over. */
const LEASE_MARGIN_MS = 5_000;
/**
 * Commits closer together than this share one fan-out transaction: at hundreds of commits a second that
 * halves the dispatcher's database work per event, for at most this much added latency.
 */
const FAN_OUT_SPACING_MS = 4;

export class WebhookDispatcher {
  private readonly opts: Required<Omit<DispatcherOptions, 'lookup' | 'logger'>>;
  private readonly log: DispatcherLogger;
  private readonly agent: Agent;
  private readonly inFlight = new Map<string, number>();
  private total = 0;
  private readonly running = new Set<Promise<void>>();
  /** Endpoints that may have due rows this process could not take yet (no free slot at the time). */
  private readonly backlog = new Set<string>();
  private readonly writer: OutcomeWriter;
  private readonly attemptDeps: AttemptDeps;
  private pumping = false;
  private again = false;
  private wantFanOut = false;
  private wantPoll = false;
  private stopped = true;
  private timer: NodeJS.Timeout | undefined;
  private wakeTimer: NodeJS.Timeout | undefined;
  private lastFanOutAt = Number.NEGATIVE_INFINITY;
  private unsubscribe: (() => void) | undefined;
  private lastPruneAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly ctx: Ctx, options: DispatcherOptions = {}) {
    this.opts = {
      pollIntervalMs: options.pollIntervalMs ?? 1_000,
      endpointConcurrency: options.endpointConcurrency ?? 32,
      maxInFlight: options.maxInFlight ?? 1024,
      fanOutBatchSize: options.fanOutBatchSize ?? 500,
      timeoutMs: options.timeoutMs ?? ctx.config.webhooks.timeoutMs,
      allowPrivateNetworks: options.allowPrivateNetworks ?? ctx.config.webhooks.allowPrivateNetworks,
      random: options.random ?? Math.random,
      signingClock: options.signingClock ?? systemClock,
      pruneIntervalMs: options.pruneIntervalMs ?? 60 * 60 * 1000,
    };
    this.log = options.logger ?? silent;
    this.agent = createGuardedDispatcher({
      allowPrivateNetworks: this.opts.allowPrivateNetworks,
      connectTimeoutMs: this.opts.timeoutMs,
      ...(options.lookup ? { lookup: options.lookup } : {}),
    });
    this.writer = new OutcomeWriter(ctx.database.db, ctx.clock, this.log);
    this.attemptDeps = {
      agent: this.agent,
      cipher: ctx.cipher,
      clock: ctx.clock,
      signingClock: this.opts.signingClock,
      timeoutMs: this.opts.timeoutMs,
      random: this.opts.random,
      secretCache: new Map(),
      log: this.log,
    };
  }

  /** Starts listening to commits and polling; pending deliveries from before a restart are picked up at once. */
  start(): this {
    if (!this.stopped) return this;
    this.stopped = false;
    this.unsubscribe = this.ctx.outbox.subscribe(() => this.wake());
    this.timer = setInterval(() => this.poll(), this.opts.pollIntervalMs);
    this.poll();
    return this;
  }

  /** New events may be in the outbox (a commit here, or a NOTIFY from another process). */
  wake(): void {
    this.wantFanOut = true;
    const wait = this.lastFanOutAt + FAN_OUT_SPACING_MS - performance.now();
    if (wait <= 0) return this.kick();
    this.wakeTimer ??= setTimeout(() => {
      this.wakeTimer = undefined;
      this.kick();
    }, wait);
  }

  /** Stops taking work, lets in-flight attempts finish (bounded by the timeout) and records their results. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.timer);
    clearTimeout(this.wakeTimer);
    this.unsubscribe?.();
    // Bounded: with the database gone, results can't be written; their leases expire and they are retried.
    const grace = new Promise<void>((resolve) => setTimeout(resolve, this.opts.timeoutMs + LEASE_MARGIN_MS).unref());
    await Promise.race([this.settled(), grace]);
    await this.agent.close();
  }

  /** Resolves once nothing is running or waiting to be written (tests and benchmarks). */
  async settled(): Promise<void> {
    while (this.pumping || this.running.size > 0 || this.writer.busy) {
      await Promise.allSettled([...this.running]);
      await this.writer.current;
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  }

  private poll(): void {
    this.wantFanOut = true;
    this.wantPoll = true;
    this.kick();
  }

  private kick(): void {
    if (this.stopped) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    setImmediate(() => void this.pump());
  }

  private async pump(): Promise<void> {
    try {
      do {
        this.again = false;
        if (this.wantFanOut) {
          this.wantFanOut = false;
          await this.fanOut();
        }
        if (this.wantPoll) {
          this.wantPoll = false;
          await this.findDue();
          await this.maybePrune();
        }
        await this.refill();
      } while (this.again && !this.stopped);
    } catch (err) {
      // The database is unreachable or similar: the next poll tries again.
      this.log.error({ err }, 'webhook dispatcher step failed');
    } finally {
      this.pumping = false;
    }
  }

  private lease(): Lease {
    const now = this.ctx.clock.now();
    return {
      token: randomBytes(8).toString('hex'),
      now: now.toISOString(),
      until: new Date(now.getTime() + this.opts.timeoutMs + LEASE_MARGIN_MS).toISOString(),
    };
  }

  private free(endpointId: string): number {
    return Math.min(this.opts.endpointConcurrency - (this.inFlight.get(endpointId) ?? 0), this.opts.maxInFlight - this.total);
  }

  private reserve(endpointId: string, n = 1): void {
    this.inFlight.set(endpointId, (this.inFlight.get(endpointId) ?? 0) + n);
    this.total += n;
  }

  private release(endpointId: string, n = 1): void {
    const left = (this.inFlight.get(endpointId) ?? 0) - n;
    if (left > 0) this.inFlight.set(endpointId, left);
    else this.inFlight.delete(endpointId);
    this.total -= n;
  }

  private async fanOut(): Promise<void> {
    this.lastFanOutAt = performance.now();
    for (;;) {
      const reserved: string[] = [];
      const tryReserve = (endpointId: string): boolean => {
        if (this.free(endpointId) <= 0) {
          this.backlog.add(endpointId);
          return false;
        }
        this.reserve(endpointId);
        reserved.push(endpointId);
        return true;
      };
      let result: Awaited<ReturnType<typeof fanOutBatch>>;
      try {
        result = await fanOutBatch(this.ctx.database.db, this.ctx.database.dialect, this.opts.fanOutBatchSize, this.lease(), tryReserve);
      } catch (err) {
        for (const id of reserved) this.release(id);
        throw err;
      }
      if (result === 'busy') {
        // Another worker is fanning out; look again shortly in case it read before our commit.
        setTimeout(() => this.wake(), 20).unref();
        return;
      }
      const launched = new Map<string, number>();
      for (const job of result.jobs) launched.set(job.endpointId, (launched.get(job.endpointId) ?? 0) + 1);
      for (const id of reserved) {
        if ((launched.get(id) ?? 0) > 0) launched.set(id, launched.get(id)! - 1);
        else this.release(id);
      }
      for (const job of result.jobs) this.launch(job);
      if (result.events < this.opts.fanOutBatchSize) return;
    }
  }

  /** Notes every endpoint with due rows; refill() then takes as many as each endpoint has free slots. */
  private async findDue(): Promise<void> {
    const due = await endpointsWithDueDeliveries(this.ctx.database.db, this.ctx.clock.now().toISOString(), 10_000);
    for (const id of due) this.backlog.add(id);
  }

  private async refill(): Promise<void> {
    for (const endpointId of [...this.backlog]) {
      if (this.stopped || this.total >= this.opts.maxInFlight) return;
      const n = this.free(endpointId);
      // While some of its attempts are in flight, wait until a quarter of an endpoint's slots are free and claim
      // them together: one claim transaction per several deliveries instead of one per delivery.
      const busy = this.inFlight.get(endpointId) ?? 0;
      if (n <= 0 || (busy > 0 && n < Math.ceil(this.opts.endpointConcurrency / 4))) continue;
      this.reserve(endpointId, n);
      let jobs: Job[];
      try {
        jobs = await claimDeliveries(this.ctx.database.db, this.ctx.database.dialect, endpointId, n, this.lease());
      } catch (err) {
        this.release(endpointId, n);
        throw err;
      }
      this.release(endpointId, n - jobs.length);
      // Round robin: an endpoint that still has work goes to the back of the line.
      this.backlog.delete(endpointId);
      if (jobs.length === n) this.backlog.add(endpointId);
      for (const job of jobs) this.launch(job);
    }
  }

  /** Runs one attempt in its (already reserved) slot; the slot frees when it ends and the pump refills it. */
  private launch(job: Job): void {
    const run = runAttempt(job, this.attemptDeps)
      .then((outcome) => {
        if (outcome.kind === 'attempt') this.ctx.metrics?.deliveries.inc({ outcome: DELIVERY_OUTCOMES[outcome.record.decision.status] });
        this.writer.record(outcome);
      })
      .catch((err: unknown) => this.log.error({ err, deliveryId: job.deliveryId }, 'webhook attempt crashed'))
      .finally(() => {
        this.release(job.endpointId);
        this.running.delete(run);
        this.kick();
      });
    this.running.add(run);
  }

  private async maybePrune(): Promise<void> {
    const now = this.ctx.clock.now().getTime();
    if (now - this.lastPruneAt < this.opts.pruneIntervalMs) return;
    this.lastPruneAt = now;
    const removed = await pruneDeliveryLog(this.ctx);
    if (removed > 0) this.log.info({ removed }, 'pruned the webhook delivery log');
  }
}
