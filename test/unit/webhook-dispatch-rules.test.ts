import { describe, expect, it } from 'vitest';
import { decide, failingTooLong, planFanOut, subscribes, summarizeSignals, type AttemptResult, type FanOutEvent } from '../../src/modules/webhooks/dispatcher.outcome.js';

const at = new Date('2026-03-01T12:00:00.000Z');
const result = (over: Partial<AttemptResult>): AttemptResult => ({
  startedAt: at,
  durationMs: 12,
  responseStatus: 200,
  responseExcerpt: null,
  error: null,
  succeeded: false,
  retryAfter: undefined,
  ...over,
});
const noJitter = () => 0.5;
const plus = (ms: number) => new Date(at.getTime() + ms).toISOString();

describe('decide', () => {
  it('a 2xx succeeds and marks the endpoint healthy', () => {
    expect(decide(1, result({ succeeded: true }), at)).toEqual({ delivery: { status: 'SUCCEEDED', dueAt: null, error: null }, endpoint: 'healthy' });
  });

  it('a failure is retried on the schedule, with the reason kept', () => {
    expect(decide(1, result({ responseStatus: 500 }), at, noJitter)).toEqual({
      delivery: { status: 'PENDING', dueAt: plus(5_000), error: 'HTTP 500' },
      endpoint: 'failing',
    });
    expect(decide(2, result({ responseStatus: null, error: 'Connection refused' }), at, noJitter).delivery).toEqual({
      status: 'PENDING',
      dueAt: plus(5 * 60_000),
      error: 'Connection refused',
    });
  });

  it('jitter stays within ±20 %', () => {
    const low = decide(1, result({ responseStatus: 500 }), at, () => 0).delivery.dueAt!;
    const high = decide(1, result({ responseStatus: 500 }), at, () => 0.999999).delivery.dueAt!;
    expect(low).toBe(plus(4_000));
    expect(new Date(high).getTime() - at.getTime()).toBeGreaterThan(5_900);
    expect(new Date(high).getTime() - at.getTime()).toBeLessThanOrEqual(6_000);
  });

  it('gives up after the tenth attempt', () => {
    expect(decide(10, result({ responseStatus: 502 }), at, noJitter)).toEqual({
      delivery: { status: 'FAILED', dueAt: null, error: 'Gave up after attempt 10: HTTP 502' },
      endpoint: 'failing',
    });
  });

  it('410 fails at once and reports the endpoint gone', () => {
    const d = decide(1, result({ responseStatus: 410 }), at);
    expect(d.delivery).toMatchObject({ status: 'FAILED', dueAt: null });
    expect(d.endpoint).toBe('gone');
  });

  it('honours Retry-After on 429 and 503 only, never sooner than the schedule', () => {
    expect(decide(1, result({ responseStatus: 429, retryAfter: '60' }), at, noJitter).delivery.dueAt).toBe(plus(60_000));
    expect(decide(1, result({ responseStatus: 503, retryAfter: '1' }), at, noJitter).delivery.dueAt).toBe(plus(5_000));
    expect(decide(1, result({ responseStatus: 500, retryAfter: '60' }), at, noJitter).delivery.dueAt).toBe(plus(5_000));
    // A hostile Retry-After can't park a delivery for more than a day.
    expect(decide(1, result({ responseStatus: 503, retryAfter: '99999999' }), at, noJitter).delivery.dueAt).toBe(plus(24 * 3_600_000));
  });

  it('a 3xx with its reason is a failure', () => {
    expect(decide(1, result({ responseStatus: 301, error: 'Redirects are not followed (HTTP 301)' }), at, noJitter).delivery.error).toBe('Redirects are not followed (HTTP 301)');
  });
});

describe('failingTooLong', () => {
  it('is true from exactly 3 days after the first failure', () => {
    expect(failingTooLong('2026-03-01T12:00:00.000Z', new Date('2026-03-04T11:59:59.999Z'))).toBe(false);
    expect(failingTooLong('2026-03-01T12:00:00.000Z', new Date('2026-03-04T12:00:00.000Z'))).toBe(true);
  });
});

describe('summarizeSignals', () => {
  it('orders results by time: a success clears, failures after it start a new run', () => {
    const s = summarizeSignals([
      { endpointId: 'a', signal: 'failing', at: '2026-03-01T00:00:03Z' },
      { endpointId: 'a', signal: 'healthy', at: '2026-03-01T00:00:02Z' },
      { endpointId: 'a', signal: 'failing', at: '2026-03-01T00:00:01Z' },
      { endpointId: 'a', signal: 'failing', at: '2026-03-01T00:00:04Z' },
      { endpointId: 'b', signal: 'failing', at: '2026-03-01T00:00:01Z' },
      { endpointId: 'b', signal: 'healthy', at: '2026-03-01T00:00:05Z' },
      { endpointId: 'c', signal: 'gone', at: '2026-03-01T00:00:01Z' },
    ]);
    expect(s.recovered.sort()).toEqual(['a', 'b']);
    expect(s.failing).toEqual(new Map([
      ['a', { first: '2026-03-01T00:00:03Z', last: '2026-03-01T00:00:04Z' }],
      ['c', { first: '2026-03-01T00:00:01Z', last: '2026-03-01T00:00:01Z' }],
    ]));
    expect(s.gone).toEqual(['c']);
  });
});

describe('planFanOut', () => {
  const event = (id: string, type: string, org = 'o1', createdAt = '2026-03-01T00:00:10Z'): FanOutEvent => ({ seq: 1, txid: '0', id, organizationId: org, type, payload: '{}', createdAt });
  const endpoints = [
    { id: 'all', organizationId: 'o1', events: ['*'], createdAt: '2026-03-01T00:00:00Z' },
    { id: 'leads', organizationId: 'o1', events: ['lead.created'], createdAt: '2026-03-01T00:00:00Z' },
    { id: 'late', organizationId: 'o1', events: ['*'], createdAt: '2026-03-01T00:00:20Z' },
    { id: 'other-org', organizationId: 'o2', events: ['*'], createdAt: '2026-03-01T00:00:00Z' },
  ];
  const pairs = (events: FanOutEvent[]) => planFanOut(events, endpoints).map((p) => `${p.event.id}→${p.endpoint.id}`);

  it('matches organization, filter and creation time', () => {
    expect(pairs([event('e1', 'lead.created'), event('e2', 'lead.updated'), event('e3', 'lead.created', 'o2')])).toEqual(['e1→all', 'e1→leads', 'e2→all', 'e3→other-org']);
    expect(pairs([event('e4', 'lead.created', 'o1', '2026-03-01T00:00:30Z')])).toEqual(['e4→all', 'e4→leads', 'e4→late']);
  });

  it('never fans out webhook.test (queued for its one endpoint by the API)', () => {
    expect(pairs([event('t', 'webhook.test')])).toEqual([]);
  });

  it('subscribes: a listed type or "*"', () => {
    expect(subscribes(['*'], 'deal.created')).toBe(true);
    expect(subscribes(['lead.created'], 'lead.updated')).toBe(false);
  });
});
