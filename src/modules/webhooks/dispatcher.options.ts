// The dispatcher's options and their defaults.

import type dns from 'node:dns';
import type { Config } from '../../config.js';
import { systemClock, type Clock } from '../../lib/clock.js';
import { DEFAULT_BACKLOG, type BacklogLimits } from './dispatcher.work.js';

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
   * away. An endpoint whose latest attempt failed gets 4 until one succeeds (see dispatcher.lanes.ts).
   */
  endpointConcurrency?: number;
  /** Attempts in flight in this process. Default 1024. */
  maxInFlight?: number;
  /**
   * Events read per fan-out transaction. Default 100: SQLite blocks the event loop for the whole transaction,
   * so a backlog is fanned out in short steps with attempts sent in between.
   */
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
  /** When a failing endpoint's events are deferred, and queued again (dispatcher.work.ts). */
  backlog?: BacklogLimits;
}

export type ResolvedOptions = Required<Omit<DispatcherOptions, 'lookup' | 'logger'>>;

export function resolveOptions(webhooks: Config['webhooks'], options: DispatcherOptions): ResolvedOptions {
  return {
    pollIntervalMs: options.pollIntervalMs ?? 1_000,
    endpointConcurrency: options.endpointConcurrency ?? 32,
    maxInFlight: options.maxInFlight ?? 1024,
    fanOutBatchSize: options.fanOutBatchSize ?? 100,
    timeoutMs: options.timeoutMs ?? webhooks.timeoutMs,
    allowPrivateNetworks: options.allowPrivateNetworks ?? webhooks.allowPrivateNetworks,
    random: options.random ?? Math.random,
    signingClock: options.signingClock ?? systemClock,
    pruneIntervalMs: options.pruneIntervalMs ?? 60 * 60 * 1000,
    backlog: options.backlog ?? DEFAULT_BACKLOG,
  };
}
