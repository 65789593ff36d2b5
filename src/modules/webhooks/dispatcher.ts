// The webhook dispatcher: outbox → delivery rows → signed HTTP attempts, with retries.
//
// Flow: a commit (ctx.outbox), a PostgreSQL NOTIFY or the poll timer wakes the pump. Each turn of the pump
// writes the results gathered since the last turn, fans new events out to delivery rows (leasing at once those
// whose endpoint has room in this process) and claims due rows for endpoints with room, all three started
// together so that on SQLite they share one commit. Each endpoint has its own concurrency limit, so a slow or
// dead endpoint only ever ties up its own slots (see dispatcher.lanes.ts). Results are written off the send
// path. No transaction is ever open across network I/O.
//
// The parts, in the order a delivery passes through them:
//   dispatcher.ts           the pump: wake-ups, turns, leases, shutdown (this file)
//   dispatcher.options.ts   options and their defaults
//   dispatcher.work.ts      each database step as one short transaction: fan-out, claim, record results
//   dispatcher.store.ts     SQL for taking work: the fan-out cursor, new delivery rows, claims under a lease
//   dispatcher.lanes.ts     per-endpoint slots, so a slow endpoint only ties up its own
//   dispatcher.attempt.ts   one claimed delivery → one signed attempt → the outcome to record
//   dispatcher.send.ts      the HTTP request itself (through ssrf.ts's guarded connector)
//   dispatcher.outcome.ts   what a result means: delivered, retry when (retry-schedule.ts), endpoint health
//   dispatcher.writer.ts    results gathered off the send path, written in the next step's transaction
//   dispatcher-results.store.ts  SQL for those results and the attempt log
//   pg-wakeup.ts            PostgreSQL LISTEN/NOTIFY wake-ups across processes
//   dispatch-lag.store.ts   the outbox backlog GET /metrics reports

import { randomBytes } from 'node:crypto';
import type { Agent } from 'undici';
import type { AppContext } from '../../context.js';
import { runAttempt, type AttemptDeps } from './dispatcher.attempt.js';
import { EndpointLanes, type AttemptEnd } from './dispatcher.lanes.js';
import { resolveOptions, type DispatcherLogger, type DispatcherOptions, type ResolvedOptions } from './dispatcher.options.js';
import type { DeliveryDecision, DeliveryOutcome } from './dispatcher.outcome.js';
import { endpointsWithDueDeliveries, type Job, type Lease } from './dispatcher.store.js';
import { catchUpBatch, claimDue, fanOutBatch, type Sending } from './dispatcher.work.js';
import { OutcomeWriter } from './dispatcher.writer.js';
import { createGuardedDispatcher } from './ssrf.js';
import { pruneDeliveryLog } from './webhooks.service.js';
import { pruneEvents } from '../events/feed.service.js';

export type { DispatcherLogger, DispatcherOptions } from './dispatcher.options.js';

type Ctx = Pick<AppContext, 'config' | 'database' | 'cipher' | 'clock' | 'outbox'> & Partial<Pick<AppContext, 'metrics'>>;

const silent: DispatcherLogger = { debug() {}, info() {}, warn() {}, error() {} };
/** An attempt's decision as the crm_webhook_deliveries_total{outcome} label. */
const DELIVERY_OUTCOMES = { SUCCEEDED: 'delivered', PENDING: 'retrying', FAILED: 'failed' } as const satisfies Record<DeliveryDecision['status'], DeliveryOutcome>;

/** Margin on top of the send timeout before another worker may take a claimed row over. */
const LEASE_MARGIN_MS = 5_000;
/**
 * A fan-out starts at least this long after the previous one ended. Commits closer together share one fan-out
 * transaction (at hundreds of commits a second that halves the dispatcher's database work per event, for at
 * most this much added latency), and while a backlog is fanned out, attempts get the event loop in between.
 */
const FAN_OUT_SPACING_MS = 4;
/**
 * Results of attempts wait at most this long to be written when no fan-out or claim comes to take them along:
 * one transaction for many results, without a commit of their own.
 */
const RESULT_GATHER_MS = 20;
/**
 * Jobs leased ahead per endpoint and per process, at most (an endpoint is leased ahead no more than it delivered
 * in the last second, well inside the lease margin: a queued job must start within LEASE_MARGIN_MS of its lease).
 */
const LEASE_AHEAD = { perEndpoint: 1_000, total: 4_000 };

export class WebhookDispatcher {
  private readonly opts: ResolvedOptions;
  private readonly log: DispatcherLogger;
  private readonly agent: Agent;
  private readonly lanes: EndpointLanes;
  private readonly running = new Set<Promise<void>>();
  /** Endpoints that may have due rows this process has not leased (it had no room for them at the time). */
  private readonly backlog = new Set<string>();
  private readonly writer: OutcomeWriter;
  private readonly attemptDeps: AttemptDeps;
  private pumping: Promise<void> | null = null;
  private again = false;
  private wantFanOut = false;
  /** Endpoints with deferred events may be ready for them (checked at every poll, and again while some were). */
  private wantCatchUp = false;
  /** The latest fan-out read a full batch: the outbox holds more events than were fanned out. */
  private behind = false;
  private wantPoll = false;
  private stopped = true;
  private timer: NodeJS.Timeout | undefined;
  private wakeTimer: NodeJS.Timeout | undefined;
  private resultsTimer: NodeJS.Timeout | undefined;
  private lastFanOutAt = Number.NEGATIVE_INFINITY;
  private unsubscribe: (() => void) | undefined;
  private lastPruneAt = Number.NEGATIVE_INFINITY;

  constructor(private readonly ctx: Ctx, options: DispatcherOptions = {}) {
    this.opts = resolveOptions(ctx.config.webhooks, options);
    this.log = options.logger ?? silent;
    this.agent = createGuardedDispatcher({
      allowPrivateNetworks: this.opts.allowPrivateNetworks,
      connectTimeoutMs: this.opts.timeoutMs,
      ...(options.lookup ? { lookup: options.lookup } : {}),
    });
    this.lanes = new EndpointLanes({
      perEndpoint: this.opts.endpointConcurrency,
      total: this.opts.maxInFlight,
      ahead: LEASE_AHEAD.perEndpoint,
      aheadTotal: LEASE_AHEAD.total,
    });
    this.writer = new OutcomeWriter(ctx.database, ctx.clock, this.log);
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
    if (this.stopped) return;
    this.wantFanOut = true;
    const wait = this.lastFanOutAt + FAN_OUT_SPACING_MS - performance.now();
    if (wait <= 0) return this.kick();
    this.wakeTimer ??= setTimeout(() => {
      this.wakeTimer = undefined;
      this.kick();
    }, wait);
  }

  /**
   * Stops taking work, hands back jobs leased ahead but not started (due again at once, for the next
   * dispatcher), lets in-flight attempts finish (bounded by the timeout) and records their results.
   */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    clearInterval(this.timer);
    clearTimeout(this.wakeTimer);
    clearTimeout(this.resultsTimer);
    // settled() waits while a spaced fan-out is pending: a cleared one never comes.
    this.wakeTimer = this.resultsTimer = undefined;
    this.unsubscribe?.();
    this.handBack(this.lanes.evict(() => false));
    // Bounded: with the database gone, results can't be written; their leases expire and they are retried.
    const grace = new Promise<void>((resolve) => setTimeout(resolve, this.opts.timeoutMs + LEASE_MARGIN_MS).unref());
    await Promise.race([this.settled(), grace]);
    await this.agent.close();
  }

  /** Resolves once nothing is running, queued or waiting to be written (tests and benchmarks). */
  async settled(): Promise<void> {
    for (;;) {
      if (this.pumping) await this.pumping;
      // A fan-out spaced after the previous one (wake) has not started yet: it is still to come.
      else if (this.wakeTimer !== undefined) await new Promise((resolve) => setTimeout(resolve, FAN_OUT_SPACING_MS));
      else if (this.running.size > 0) await Promise.allSettled([...this.running]);
      else if (this.writer.busy) await this.writer.flush().catch(() => new Promise((resolve) => setTimeout(resolve, 100)));
      else return;
    }
  }

  private poll(): void {
    this.wantFanOut = true;
    this.wantCatchUp = true;
    this.wantPoll = true;
    this.kick();
  }

  private kick(): void {
    if (this.stopped) return;
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.pump())
      .finally(() => {
        this.pumping = null;
        if (this.again) this.kick();
      });
  }

  private async pump(): Promise<void> {
    try {
      do {
        this.again = false;
        if (this.wantPoll) {
          this.wantPoll = false;
          await this.findDue();
          await this.maybePrune();
          this.handBack(this.lanes.evict((job) => this.canStillSend(job)));
          this.lanes.forgetIdle();
        }
        const fanOut = this.fanOutDue();
        if (fanOut) this.wantFanOut = false;
        const catchUp = this.wantCatchUp;
        this.wantCatchUp = false;
        clearTimeout(this.resultsTimer);
        this.resultsTimer = undefined;
        // Requested in the same turn, so on SQLite the transactions share one commit.
        const steps = await Promise.allSettled([this.writer.flush(), fanOut ? this.fanOut() : undefined, catchUp ? this.catchUp() : undefined, this.refill()]);
        const failed = steps.find((s) => s.status === 'rejected');
        if (failed) throw failed.reason;
      } while (this.again && !this.stopped);
    } catch (err) {
      // The database is unreachable or similar: the next poll tries again.
      this.log.error({ err }, 'webhook dispatcher step failed');
    }
  }

  /**
   * New events may wait, and the process is not already stocked with work from a backlog: while the outbox is
   * behind, the next batch waits until the jobs leased ahead run low, so that attempts, not the bookkeeping of
   * events that can't be sent yet, get the event loop (SQLite blocks it for a whole transaction). Rows of an
   * endpoint with room are then leased as they are inserted, instead of inserted PENDING and claimed later.
   */
  private fanOutDue(): boolean {
    return this.wantFanOut && !(this.behind && this.lanes.queued >= this.opts.fanOutBatchSize);
  }

  private lease(): Lease {
    const now = this.ctx.clock.now();
    return {
      token: randomBytes(8).toString('hex'),
      now: now.toISOString(),
      until: new Date(now.getTime() + this.opts.timeoutMs + LEASE_MARGIN_MS).toISOString(),
    };
  }

  /** One batch of new events per turn; after a full batch the next one follows the spacing, like a wake-up. */
  private async fanOut(): Promise<void> {
    const result = await this.insertLeasing((sending) => fanOutBatch(this.ctx.database, this.opts.fanOutBatchSize, this.lease(), sending, this.opts.backlog));
    if (result === 'busy') return;
    this.behind = result.events === this.opts.fanOutBatchSize;
    if (this.behind) this.wake();
  }

  /** Queues deferred events of endpoints ready for them; while there were some, another turn follows. */
  private async catchUp(): Promise<void> {
    const result = await this.insertLeasing((sending) => catchUpBatch(this.ctx.database, this.lease(), sending, this.opts.backlog));
    if (result === 'busy' || result.events === 0) return;
    this.wantCatchUp = true;
    this.wake();
  }

  /**
   * Runs a step that inserts delivery rows, leasing at once those whose endpoint has room in this process
   * (`reserve`); reservations that did not become a job of ours are given back, the jobs admitted.
   */
  private async insertLeasing<R extends { jobs: Job[] }>(step: (sending: Sending) => Promise<R | 'busy'>): Promise<R | 'busy'> {
    const reservations = this.lanes.reservations((endpointId) => this.backlog.add(endpointId));
    let result: R | 'busy';
    try {
      result = await step(reservations.sending);
    } catch (err) {
      reservations.settle([]);
      throw err;
    } finally {
      this.lastFanOutAt = performance.now();
    }
    if (result === 'busy') {
      reservations.settle([]);
      // Another worker holds the cursor; look again shortly in case it read before our commit.
      setTimeout(() => this.wake(), 20).unref();
      return result;
    }
    reservations.settle(result.jobs);
    for (const job of result.jobs) this.admit(job);
    return result;
  }

  /** Notes every endpoint with due rows; refill() then claims as many as each endpoint has room for. */
  private async findDue(): Promise<void> {
    const due = await endpointsWithDueDeliveries(this.ctx.database.db, this.ctx.clock.now().toISOString(), 10_000);
    for (const id of due) this.backlog.add(id);
  }

  /** Claims due rows, in one transaction, for every endpoint of the backlog with room. */
  private async refill(): Promise<void> {
    const wants: { endpointId: string; limit: number }[] = [];
    for (const endpointId of this.backlog) {
      const room = this.lanes.claimable(endpointId);
      if (room === 0) continue;
      this.lanes.reserve(endpointId, room);
      wants.push({ endpointId, limit: room });
    }
    if (wants.length === 0) return;
    let jobs: Job[];
    try {
      jobs = await claimDue(this.ctx.database, wants, this.lease());
    } catch (err) {
      for (const w of wants) this.lanes.unreserve(w.endpointId, w.limit);
      throw err;
    }
    const got = new Map<string, number>();
    for (const job of jobs) got.set(job.endpointId, (got.get(job.endpointId) ?? 0) + 1);
    for (const { endpointId, limit } of wants) {
      const n = got.get(endpointId) ?? 0;
      this.lanes.unreserve(endpointId, limit - n);
      // Fewer than asked: nothing more is due. All of them: maybe more, after the other endpoints (round robin).
      this.backlog.delete(endpointId);
      if (n === limit) this.backlog.add(endpointId);
    }
    for (const job of jobs) this.admit(job);
  }

  /** A job leased to this process: started now if its endpoint has a free slot, else queued for one. */
  private admit(job: Job): void {
    if (this.stopped) {
      this.lanes.unreserve(job.endpointId);
      return this.handBack([job]);
    }
    for (const next of this.lanes.admit(job)) this.launch(next);
  }

  /** Runs one attempt in its slot; when it ends, queued jobs take the freed slot and the pump is kicked. */
  private launch(job: Job): void {
    const run = runAttempt(job, this.attemptDeps)
      .then((outcome) => {
        if (outcome.kind === 'attempt') this.ctx.metrics?.deliveries.inc({ outcome: DELIVERY_OUTCOMES[outcome.record.decision.status] });
        this.writer.record(outcome);
        return outcome.kind === 'release' ? 'not sent' : outcome.record.succeeded ? 'succeeded' : 'failed';
      })
      .catch((err: unknown): AttemptEnd => {
        this.log.error({ err, deliveryId: job.deliveryId }, 'webhook attempt crashed');
        return 'not sent';
      })
      .then((end) => {
        this.running.delete(run);
        for (const next of this.lanes.finished(job.endpointId, end)) this.launch(next);
        // Due rows worth claiming for this endpoint, or a backlog's next fan-out: a turn now. Otherwise the result
        // waits for the next turn.
        if ((this.backlog.has(job.endpointId) && this.lanes.claimable(job.endpointId) > 0) || this.fanOutDue()) this.kick();
        else this.resultsTimer ??= setTimeout(() => this.kick(), RESULT_GATHER_MS);
      });
    this.running.add(run);
  }

  /** A queued job can still be sent if a whole attempt fits in what is left of its lease. */
  private canStillSend(job: Job): boolean {
    return this.ctx.clock.now().getTime() + this.opts.timeoutMs <= new Date(job.leaseUntil).getTime();
  }

  /** Returns leased jobs that were never sent to the queue, due at once (their claim's attempt count undone). */
  private handBack(jobs: Job[]): void {
    const now = this.ctx.clock.now().toISOString();
    for (const job of jobs) this.writer.record({ kind: 'release', deliveryId: job.deliveryId, leaseToken: job.leaseToken, outcome: { dueAt: now }, now });
  }

  private async maybePrune(): Promise<void> {
    const now = this.ctx.clock.now().getTime();
    if (now - this.lastPruneAt < this.opts.pruneIntervalMs) return;
    this.lastPruneAt = now;
    const removed = await pruneDeliveryLog(this.ctx);
    if (removed > 0) this.log.info({ removed }, 'pruned the webhook delivery log');
    // After the log: an event leaves the outbox once no delivery names it any more (events/feed.store.ts).
    const events = await pruneEvents(this.ctx);
    if (events > 0) this.log.info({ removed: events }, 'pruned events past EVENT_RETENTION_DAYS');
  }
}
