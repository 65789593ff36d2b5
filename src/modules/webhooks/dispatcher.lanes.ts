// Per-endpoint sending state of one dispatcher process.
//
// Each endpoint has its own limit of attempts in flight, so a slow or dead endpoint only ties up its own slots.
// An endpoint whose latest attempt failed (timed out, refused, 5xx…) gets a few slots until one succeeds, and
// such endpoints together hold at most half of the process's slots: however many endpoints hang, the healthy
// ones keep theirs. An endpoint that is answering is also leased ahead as many jobs as it delivered in the last
// second, queued here until a slot frees: a fast endpoint is fed from memory instead of by a claim transaction
// per few deliveries. An endpoint with no recent success is leased only what its free slots start at once; the
// rest of its work waits as PENDING rows, for any worker.

import type { Job } from './dispatcher.store.js';
import type { Sending } from './dispatcher.work.js';

interface Lane {
  inFlight: number;
  /** Jobs promised to a lease transaction that has not committed yet. */
  reserved: number;
  queue: Job[];
  /** The latest attempt failed, and none succeeded since. */
  failing: boolean;
  /** Successful attempts in the current one-second window and in the one before. */
  ok: number;
  okBefore: number;
  windowStart: number;
}

export interface LaneLimits {
  /** Attempts in flight per endpoint. */
  perEndpoint: number;
  /** Attempts in flight in the process. */
  total: number;
  /** Jobs queued ahead per endpoint, and in the process, at most. */
  ahead: number;
  aheadTotal: number;
}

/** How an attempt ended, for its endpoint's state: handed back unsent counts as neither. */
export type AttemptEnd = 'succeeded' | 'failed' | 'not sent';

/** Slots of an endpoint whose latest attempt failed. */
export const FAILING_SLOTS = 4;
const WINDOW_MS = 1_000;

export class EndpointLanes {
  private readonly lanes = new Map<string, Lane>();
  /** Lanes with queued jobs. */
  private readonly waiting = new Set<Lane>();
  private inFlightTotal = 0;
  private failingInFlight = 0;
  private queuedTotal = 0;

  constructor(
    private readonly limits: LaneLimits,
    /** Milliseconds, monotonic (tests pass their own). */
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Jobs leased to this process and waiting for a slot. */
  get queued(): number {
    return this.queuedTotal;
  }

  /** How many more jobs this endpoint can be leased now: its free slots, and queue room if it is answering. */
  room(endpointId: string): number {
    const lane = this.lanes.get(endpointId);
    return lane ? Math.max(0, this.free(lane) + this.ahead(lane) - lane.queue.length - lane.reserved) : this.free(undefined);
  }

  /**
   * Room worth a claim transaction: while an endpoint is busy, wait until it has room for a quarter of its slots
   * or half of its queue, and claim them together, instead of one claim per delivery. 0 when not worth it yet.
   */
  claimable(endpointId: string): number {
    const lane = this.lanes.get(endpointId);
    const room = this.room(endpointId);
    if (!lane || (lane.inFlight === 0 && lane.queue.length === 0)) return room;
    return room >= Math.max(Math.ceil(this.limits.perEndpoint / 4), Math.ceil(this.ahead(lane) / 2)) ? room : 0;
  }

  /** This process has delivered to the endpoint in the last second or two, and its latest attempt succeeded. */
  deliveringTo(endpointId: string): boolean {
    const lane = this.lanes.get(endpointId);
    return lane !== undefined && !lane.failing && this.recentSuccesses(lane, this.now()) > 0;
  }

  /**
   * The slots a step inserting delivery rows (fan-out, catch-up) takes as it goes: `sending.reserve` takes one
   * where the endpoint has room (`noRoom` hears of the others); `settle` with the jobs the step leased gives back
   * every reservation that did not become one (its row already existed, or the step failed).
   */
  reservations(noRoom: (endpointId: string) => void): { sending: Sending; settle(jobs: readonly Job[]): void } {
    const reserved: string[] = [];
    const sending: Sending = {
      reserve: (endpointId) => {
        if (this.room(endpointId) <= 0) {
          noRoom(endpointId);
          return false;
        }
        this.reserve(endpointId);
        reserved.push(endpointId);
        return true;
      },
      deliveringTo: (endpointId) => this.deliveringTo(endpointId),
    };
    const settle = (jobs: readonly Job[]) => {
      const leased = new Map<string, number>();
      for (const job of jobs) leased.set(job.endpointId, (leased.get(job.endpointId) ?? 0) + 1);
      for (const id of reserved) {
        if ((leased.get(id) ?? 0) > 0) leased.set(id, leased.get(id)! - 1);
        else this.unreserve(id);
      }
    };
    return { sending, settle };
  }

  reserve(endpointId: string, n = 1): void {
    this.lane(endpointId).reserved += n;
  }

  unreserve(endpointId: string, n = 1): void {
    this.lane(endpointId).reserved -= n;
  }

  /** Takes a leased job (consuming one reservation); returns the jobs that can start now, this one or none. */
  admit(job: Job): Job[] {
    const lane = this.lane(job.endpointId);
    lane.reserved -= 1;
    lane.queue.push(job);
    this.queuedTotal += 1;
    this.waiting.add(lane);
    return this.startable();
  }

  /** An attempt ended: frees its slot, notes how it went, and returns the queued jobs that can start now. */
  finished(endpointId: string, end: AttemptEnd): Job[] {
    const lane = this.lane(endpointId);
    lane.inFlight -= 1;
    this.inFlightTotal -= 1;
    if (lane.failing) this.failingInFlight -= 1;
    if (end === 'succeeded') {
      this.recentSuccesses(lane, this.now());
      lane.ok += 1;
    }
    if (end !== 'not sent' && lane.failing !== (end === 'failed')) {
      lane.failing = end === 'failed';
      this.failingInFlight += lane.failing ? lane.inFlight : -lane.inFlight;
    }
    return this.startable();
  }

  /** Removes and returns queued jobs that `keep` rejects (their lease ran too short to be sent safely). */
  evict(keep: (job: Job) => boolean): Job[] {
    const evicted: Job[] = [];
    for (const lane of this.waiting) {
      const kept: Job[] = [];
      for (const job of lane.queue) (keep(job) ? kept : evicted).push(job);
      this.queuedTotal -= lane.queue.length - kept.length;
      lane.queue = kept;
      if (kept.length === 0) this.waiting.delete(lane);
    }
    return evicted;
  }

  /** Forgets healthy endpoints with nothing in flight, queued or reserved and no success for two windows. */
  forgetIdle(): void {
    const now = this.now();
    for (const [id, lane] of this.lanes) {
      const idle = lane.inFlight === 0 && lane.queue.length === 0 && lane.reserved === 0;
      if (idle && !lane.failing && this.recentSuccesses(lane, now) === 0) this.lanes.delete(id);
    }
  }

  /** Jobs an answering endpoint may have queued: what it delivered in the last second, within the bounds. */
  private ahead(lane: Lane): number {
    if (lane.failing) return 0;
    return Math.max(0, Math.min(this.limits.ahead, this.limits.aheadTotal - this.queuedTotal, this.recentSuccesses(lane, this.now())));
  }

  /** Slots this endpoint may still fill: its own limit, its class's share, the process's total. */
  private free(lane: Lane | undefined): number {
    const inFlight = lane?.inFlight ?? 0;
    const failing = lane?.failing ?? false;
    const own = (failing ? Math.min(this.limits.perEndpoint, FAILING_SLOTS) : this.limits.perEndpoint) - inFlight;
    const shared = failing ? Math.floor(this.limits.total / 2) - this.failingInFlight : Number.POSITIVE_INFINITY;
    return Math.max(0, Math.min(own, shared, this.limits.total - this.inFlightTotal));
  }

  private startable(): Job[] {
    const start: Job[] = [];
    for (const lane of this.waiting) {
      let n = Math.min(lane.queue.length, this.free(lane));
      for (; n > 0; n--) {
        start.push(lane.queue.shift()!);
        lane.inFlight += 1;
        this.inFlightTotal += 1;
        if (lane.failing) this.failingInFlight += 1;
        this.queuedTotal -= 1;
      }
      if (lane.queue.length === 0) this.waiting.delete(lane);
      if (this.inFlightTotal >= this.limits.total) break;
    }
    return start;
  }

  /** Successes in the last full window or the current one, whichever is larger (rolling the window first). */
  private recentSuccesses(lane: Lane, now: number): number {
    const elapsed = now - lane.windowStart;
    if (elapsed >= WINDOW_MS) {
      lane.okBefore = elapsed < 2 * WINDOW_MS ? lane.ok : 0;
      lane.ok = 0;
      lane.windowStart = now;
    }
    return Math.max(lane.ok, lane.okBefore);
  }

  private lane(endpointId: string): Lane {
    let lane = this.lanes.get(endpointId);
    if (!lane) this.lanes.set(endpointId, (lane = { inFlight: 0, reserved: 0, queue: [], failing: false, ok: 0, okBefore: 0, windowStart: this.now() }));
    return lane;
  }
}
