import { describe, expect, it } from 'vitest';
import { EndpointLanes, FAILING_SLOTS, type LaneLimits } from '../../src/modules/webhooks/dispatcher.lanes.js';
import type { Job } from '../../src/modules/webhooks/dispatcher.store.js';

/** The dispatcher's per-endpoint slots: what may be leased, what starts at once, what waits. */
let ids = 0;
const job = (endpointId: string): Job => ({
  deliveryId: `d${++ids}`,
  endpointId,
  eventId: 'evt_1',
  eventType: 'lead.created',
  attempt: 1,
  leaseToken: 't',
  leaseUntil: '2026-01-01T00:00:15.000Z',
  url: 'https://example.com/hook',
  enabled: true,
  endpointFailing: false,
  body: '{}',
  secrets: { id: endpointId, secretEnc: 'x', previousSecretEnc: null, previousSecretExpiresAt: null },
});

function setup(limits: Partial<LaneLimits> = {}) {
  let clock = 0;
  const lanes = new EndpointLanes({ perEndpoint: 4, total: 16, ahead: 100, aheadTotal: 400, ...limits }, () => clock);
  /** Leases up to `n` jobs the way the dispatcher does (reserve what room allows, then admit); returns those started. */
  const lease = (endpointId: string, n: number): Job[] => {
    const take = Math.min(n, lanes.room(endpointId));
    lanes.reserve(endpointId, take);
    return Array.from({ length: take }, () => job(endpointId)).flatMap((j) => lanes.admit(j));
  };
  return { lanes, lease, advance: (ms: number) => (clock += ms) };
}

describe('endpoint lanes', () => {
  it('starts at most the per-endpoint limit; a new endpoint is leased only what it can start', () => {
    const { lanes, lease } = setup();
    expect(lanes.room('a')).toBe(4);
    expect(lease('a', 10)).toHaveLength(4);
    expect(lanes.room('a')).toBe(0);
    expect(lanes.queued).toBe(0);
    // Another endpoint has slots of its own.
    expect(lease('b', 10)).toHaveLength(4);
  });

  it('leases an answering endpoint ahead by its successes of the last second, and starts them as slots free', () => {
    const { lanes, lease, advance } = setup();
    const started = lease('a', 4);
    for (const j of started) expect(lanes.finished(j.endpointId, 'succeeded')).toEqual([]);
    // 4 successes: 4 free slots plus 4 ahead.
    expect(lanes.room('a')).toBe(8);
    expect(lease('a', 10)).toHaveLength(4);
    expect(lanes.queued).toBe(4);
    const next = lanes.finished('a', 'succeeded');
    expect(next).toHaveLength(1);
    expect(lanes.queued).toBe(3);
    // Two seconds without a success: nothing is leased ahead any more.
    advance(2_100);
    expect(lanes.room('a')).toBe(0);
  });

  it('gives an endpoint whose latest attempt failed a few slots, and all failing endpoints at most half', () => {
    const { lanes, lease } = setup({ perEndpoint: 8, total: 16 });
    for (const endpoint of ['a', 'b', 'c']) {
      const [first] = lease(endpoint, 1);
      lanes.finished(first!.endpointId, 'failed');
    }
    expect(lanes.room('a')).toBe(FAILING_SLOTS);
    expect(lease('a', 8)).toHaveLength(FAILING_SLOTS);
    expect(lease('b', 8)).toHaveLength(FAILING_SLOTS);
    // Half of 16 slots are taken by failing endpoints: the third gets none, a healthy one still gets its 8.
    expect(lanes.room('c')).toBe(0);
    expect(lease('d', 8)).toHaveLength(8);
  });

  it('one success makes a failing endpoint healthy again, with its full limit', () => {
    const { lanes, lease } = setup({ perEndpoint: 8 });
    lanes.finished(lease('a', 1)[0]!.endpointId, 'failed');
    expect(lanes.room('a')).toBe(FAILING_SLOTS);
    lanes.finished(lease('a', 1)[0]!.endpointId, 'succeeded');
    // 8 slots, plus 1 ahead for its one success.
    expect(lanes.room('a')).toBe(9);
  });

  it('an attempt handed back unsent changes nothing about its endpoint', () => {
    const { lanes, lease } = setup();
    const [first] = lease('a', 1);
    lanes.finished(first!.endpointId, 'failed');
    const [second] = lease('a', 1);
    lanes.finished(second!.endpointId, 'not sent');
    expect(lanes.room('a')).toBe(FAILING_SLOTS);
  });

  it('evicts the queued jobs it is told to, and only those', () => {
    const { lanes, lease } = setup({ perEndpoint: 1 });
    const [first] = lease('a', 1);
    lanes.finished(first!.endpointId, 'succeeded');
    lanes.finished(lease('a', 1)[0]!.endpointId, 'succeeded');
    lease('a', 3); // 1 starts, 2 wait
    expect(lanes.queued).toBe(2);
    const evicted = lanes.evict(() => false);
    expect(evicted).toHaveLength(2);
    expect(lanes.queued).toBe(0);
    expect(lanes.finished('a', 'succeeded')).toEqual([]);
  });
});
