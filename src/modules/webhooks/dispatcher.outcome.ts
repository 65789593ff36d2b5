// What an attempt's result means for its delivery and its endpoint (contract §5). Pure, so every rule is
// unit-tested without a network or a database.

import { nextAttemptDelay, parseRetryAfter } from './retry-schedule.js';
import { ALL_EVENTS } from './webhooks.schemas.js';

/** An endpoint that has failed every attempt for this long is disabled and flagged. */
export const FAILING_DISABLE_AFTER_MS = 3 * 24 * 60 * 60 * 1000;

export interface AttemptResult {
  startedAt: Date;
  durationMs: number;
  responseStatus: number | null;
  responseExcerpt: string | null;
  error: string | null;
  succeeded: boolean;
  /** The Retry-After header of the answer, if any. */
  retryAfter: string | undefined;
}

export type DeliveryDecision =
  | { status: 'SUCCEEDED'; dueAt: null; error: null }
  | { status: 'PENDING'; dueAt: string; error: string | null }
  | { status: 'FAILED'; dueAt: null; error: string };

/** Outcomes of one webhook delivery attempt, as the dispatcher reports them to the metrics. */
export type DeliveryOutcome = 'delivered' | 'retrying' | 'failed';

/** healthy: a 2xx; failing: any other result; gone: a 410, which disables the endpoint at once. */
export type EndpointSignal = 'healthy' | 'failing' | 'gone';

export function decide(
  attempt: number,
  result: AttemptResult,
  finishedAt: Date,
  random: () => number = Math.random,
): { delivery: DeliveryDecision; endpoint: EndpointSignal } {
  if (result.succeeded) return { delivery: { status: 'SUCCEEDED', dueAt: null, error: null }, endpoint: 'healthy' };
  if (result.responseStatus === 410) {
    return { delivery: { status: 'FAILED', dueAt: null, error: 'The endpoint answered 410 Gone: it has been disabled' }, endpoint: 'gone' };
  }
  // Retry-After is a request to slow down, honoured where HTTP defines it for that: 429 and 503.
  const honoured = result.responseStatus === 429 || result.responseStatus === 503;
  const retryAfterMs = honoured ? parseRetryAfter(result.retryAfter, finishedAt) : null;
  const delay = nextAttemptDelay(attempt, { random, retryAfterMs });
  const lastError = result.error ?? (result.responseStatus !== null ? `HTTP ${result.responseStatus}` : 'No response');
  if (delay === null) {
    return { delivery: { status: 'FAILED', dueAt: null, error: `Gave up after attempt ${attempt}: ${lastError}` }, endpoint: 'failing' };
  }
  return { delivery: { status: 'PENDING', dueAt: new Date(finishedAt.getTime() + delay).toISOString(), error: lastError }, endpoint: 'failing' };
}

/** True once an unbroken run of failures that started at `failingSince` has lasted 3 days. */
export function failingTooLong(failingSince: string, now: Date): boolean {
  return now.getTime() - new Date(failingSince).getTime() >= FAILING_DISABLE_AFTER_MS;
}

export function subscribes(filter: readonly string[], type: string): boolean {
  return filter.includes(ALL_EVENTS) || filter.includes(type);
}

export interface FanOutEvent {
  seq: number;
  txid: string;
  id: string;
  organizationId: string;
  type: string;
  payload: string;
  createdAt: string;
}

export interface FanOutEndpoint {
  id: string;
  organizationId: string;
  events: string[];
  createdAt: string;
}

/**
 * Which (event, endpoint) pairs become deliveries: same organization, subscribed to the type, and the
 * endpoint existed when the event happened. Test events are queued directly for their one endpoint.
 */
export function planFanOut<E extends FanOutEndpoint>(events: FanOutEvent[], endpoints: E[]): { event: FanOutEvent; endpoint: E }[] {
  const byOrg = new Map<string, E[]>();
  for (const endpoint of endpoints) byOrg.set(endpoint.organizationId, [...(byOrg.get(endpoint.organizationId) ?? []), endpoint]);
  const pairs: { event: FanOutEvent; endpoint: E }[] = [];
  for (const event of events) {
    if (event.type === 'webhook.test') continue;
    for (const endpoint of byOrg.get(event.organizationId) ?? []) {
      if (endpoint.createdAt <= event.createdAt && subscribes(endpoint.events, event.type)) pairs.push({ event, endpoint });
    }
  }
  return pairs;
}

export interface EndpointSignals {
  /** Endpoints that answered 2xx at least once: their run of failures (if any) ended. */
  recovered: string[];
  /** Endpoints whose latest result is a failure → when the failures after their last success began, and the latest. */
  failing: Map<string, { first: string; last: string }>;
  /** Endpoints that answered 410. */
  gone: string[];
}

/** Folds a batch of results, in any order, into what each endpoint's health became. */
export function summarizeSignals(results: { endpointId: string; signal: EndpointSignal; at: string }[]): EndpointSignals {
  const sorted = [...results].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  const recovered = new Set<string>();
  const gone = new Set<string>();
  const failing = new Map<string, { first: string; last: string }>();
  for (const r of sorted) {
    if (r.signal === 'gone') gone.add(r.endpointId);
    if (r.signal === 'healthy') {
      recovered.add(r.endpointId);
      failing.delete(r.endpointId);
    } else {
      const run = failing.get(r.endpointId);
      failing.set(r.endpointId, { first: run?.first ?? r.at, last: r.at });
    }
  }
  return { recovered: [...recovered], failing, gone: [...gone] };
}
