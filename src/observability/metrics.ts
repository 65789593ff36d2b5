import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Clock } from '../lib/clock.js';
import type { RateLimiter } from '../http/rate-limit.js';
import type { OutboxProbe, Undispatched } from '../modules/events/outbox-lag.js';
import type { DeliveryOutcome } from '../modules/webhooks/dispatcher.outcome.js';

/**
 * The process's Prometheus metrics. One registry per AppContext (not prom-client's global one), so several
 * apps in one process (tests) never share or double-register series.
 */
export interface Metrics {
  readonly registry: Registry;
  /**
   * False in the extra HTTP threads of a multi-thread server: their registries hold only their own request
   * counts, summed into the main thread's at scrape time; process metrics and outbox gauges are the main's.
   */
  readonly processWide: boolean;
  /** Labelled by route pattern (`/api/public/v1/leads/:id`), never the raw URL, so series stay bounded. */
  readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  readonly rateLimited: Counter;
  /** Incremented by the webhook dispatcher once per attempt. */
  readonly deliveries: Counter<'outcome'>;
}

export interface MetricsSources {
  /** Absent in the extra HTTP threads (see Metrics.processWide). */
  outbox?: OutboxProbe;
  clock: Clock;
}

export function createMetrics(sources: MetricsSources): Metrics {
  const registry = new Registry();
  const registers = [registry];
  const metrics: Metrics = {
    registry,
    processWide: sources.outbox !== undefined,
    httpRequests: new Counter({ name: 'crm_http_requests_total', help: 'HTTP requests answered, by method, route pattern and status.', labelNames: ['method', 'route', 'status'], registers }),
    httpDuration: new Histogram({
      name: 'crm_http_request_duration_seconds',
      help: 'Time from request received to response sent, by method, route pattern and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    rateLimited: new Counter({ name: 'crm_rate_limit_rejections_total', help: 'Requests answered 429 by the per-key rate limit.', registers }),
    deliveries: new Counter({ name: 'crm_webhook_deliveries_total', help: 'Webhook delivery attempts, by outcome.', labelNames: ['outcome'], registers }),
  };
  if (sources.outbox) registerOutboxGauges(registry, sources.outbox, sources.clock);
  return metrics;
}

/** Outbox gauges read the database at scrape time (a scrape every few seconds costs a few indexed reads). */
function registerOutboxGauges(registry: Registry, outbox: OutboxProbe, clock: Clock): void {
  const registers = [registry];
  new Gauge({
    name: 'crm_outbox_newest_event_seq',
    help: 'Sequence number of the newest event written to the outbox.',
    registers,
    async collect() {
      this.set(await outbox.newestSeq());
    },
  });
  const undispatched = outbox.undispatched?.bind(outbox);
  if (!undispatched) return;
  // prom-client collects metrics concurrently: the first collect starts the query, the other awaits it.
  let inFlight: Promise<Undispatched> | null = null;
  const read = () =>
    (inFlight ??= undispatched().finally(() => {
      inFlight = null;
    }));
  new Gauge({
    name: 'crm_outbox_undispatched_events',
    help: 'Events written but not yet handed to webhook delivery.',
    registers,
    async collect() {
      this.set((await read()).count);
    },
  });
  new Gauge({
    name: 'crm_outbox_oldest_undispatched_age_seconds',
    help: 'Age of the oldest event not yet handed to webhook delivery (0 when none).',
    registers,
    async collect() {
      const oldest = (await read()).oldestCreatedAt;
      this.set(oldest === null ? 0 : Math.max(0, (clock.now().getTime() - new Date(oldest).getTime()) / 1000));
    },
  });
}

/** Counts the limiter's refusals without the auth pipeline knowing about metrics. */
export function countingRateLimiter(inner: RateLimiter, rejected: Counter): RateLimiter {
  return {
    async hit(key, limit, windowMs, cost) {
      const result = await inner.hit(key, limit, windowMs, cost);
      if (!result.allowed) rejected.inc();
      return result;
    },
    ...(inner.ready ? { ready: () => inner.ready!() } : {}),
    close: () => inner.close(),
  };
}
