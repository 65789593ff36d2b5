import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.js';
import { eventually, verifyBoth } from '../helpers/receiver.js';
import { createLead, deliveries, endpoint, latestDelivery, startHarness, TEST_TIMEOUT_MS, webhook, type Harness } from '../helpers/webhooks.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const DAY = 24 * 60 * MINUTE;
const inMs = (ms: number) => new Date(h.clock.now().getTime() + ms).toISOString();
const pendingAttempt = (n: number) => (d: any) => expect(d).toMatchObject({ status: 'PENDING', attempt: n });

describe('retries', () => {
  it('retries 500s on the schedule, then succeeds; every attempt is logged and freshly signed', async () => {
    const e = await endpoint(h);
    h.receiver.on(e.path, (res, n) => {
      res.statusCode = n <= 2 ? 500 : 200;
      res.end(n <= 2 ? 'boom' : 'fine');
    });
    await createLead(h, e.org);
    const first = await latestDelivery(h, e, pendingAttempt(1));
    expect(first).toMatchObject({ responseStatus: 500, responseExcerpt: 'boom', error: 'HTTP 500', nextAttemptAt: inMs(5 * SECOND) });
    expect((await webhook(h, e)).failingSince).toBe(h.clock.now().toISOString());

    h.wall.advance(2 * SECOND);
    h.clock.advance(5 * SECOND);
    await latestDelivery(h, e, (d) => expect(d).toMatchObject({ status: 'PENDING', attempt: 2, nextAttemptAt: inMs(5 * MINUTE) }));

    h.wall.advance(2 * SECOND);
    h.clock.advance(5 * MINUTE);
    const done = await latestDelivery(h, e, (d) => expect(d.status).toBe('SUCCEEDED'));
    expect(done).toMatchObject({ attempt: 3, responseStatus: 200, responseExcerpt: 'fine', error: null, nextAttemptAt: null });
    expect(done.attempts.map((a: any) => [a.attempt, a.responseStatus, a.succeeded])).toEqual([[1, 500, false], [2, 500, false], [3, 200, true]]);
    expect((await webhook(h, e)).failingSince).toBeNull();

    const sent = h.receiver.requests(e.path);
    expect(sent).toHaveLength(3);
    for (const r of sent) verifyBoth(r, e.secret);
    expect(new Set(sent.map((r) => r.headers['webhook-id'])).size).toBe(1);
    expect(new Set(sent.map((r) => r.headers['x-service-delivery']))).toEqual(new Set([done.id]));
    expect(new Set(sent.map((r) => r.headers['webhook-timestamp'])).size).toBe(3);
  });

  it('honours Retry-After on 503 (seconds) and 429 (HTTP date), not on 500', async () => {
    const cases: [number, (now: Date) => string, number][] = [
      [503, () => '120', 120 * SECOND],
      [429, (now) => new Date(now.getTime() + 10 * MINUTE).toUTCString(), 10 * MINUTE],
      [500, () => '120', 5 * SECOND],
    ];
    for (const [status, header, wait] of cases) {
      const e = await endpoint(h);
      h.receiver.on(e.path, (res) => {
        res.statusCode = status;
        res.setHeader('retry-after', header(h.clock.now()));
        res.end();
      });
      await createLead(h, e.org);
      const d = await latestDelivery(h, e, pendingAttempt(1));
      const delay = new Date(d.nextAttemptAt).getTime() - h.clock.now().getTime();
      expect(delay, `HTTP ${status}`).toBeGreaterThan(wait - SECOND);
      expect(delay, `HTTP ${status}`).toBeLessThanOrEqual(wait);
    }
  });
});

describe('timeouts', () => {
  beforeAll(() => h.restart({ timeoutMs: TEST_TIMEOUT_MS }));
  afterAll(() => h.restart());

  it('times out a silent endpoint', async () => {
    const e = await endpoint(h);
    h.receiver.on(e.path, () => undefined);
    await createLead(h, e.org);
    const d = await latestDelivery(h, e, pendingAttempt(1));
    expect(d).toMatchObject({ responseStatus: null, error: `Timed out after ${TEST_TIMEOUT_MS} ms` });
    expect(d.durationMs).toBeGreaterThanOrEqual(TEST_TIMEOUT_MS - 5);
    h.receiver.on(e.path, (res) => res.end()); // its retries, due when later tests move the clock, answer at once
  });

  it('times out a body that trickles past the deadline', async () => {
    // The status line must arrive well within the deadline, on a busy machine too (at 300 ms it once came after
    // it, under a load average of 14), so that what runs out of time is the body.
    const deadline = 3_000;
    await h.restart({ timeoutMs: deadline });
    try {
      const e = await endpoint(h);
      h.receiver.on(e.path, (res) => {
        res.writeHead(200);
        const drip = setInterval(() => res.write('.'), 100).unref();
        setTimeout(() => {
          clearInterval(drip);
          res.end('done');
        }, deadline * 3).unref();
      });
      await createLead(h, e.org);
      const d = await latestDelivery(h, e, pendingAttempt(1));
      expect(d).toMatchObject({ responseStatus: 200, error: `Timed out after ${deadline} ms` });
      h.receiver.on(e.path, (res) => res.end());
    } finally {
      await h.restart({ timeoutMs: TEST_TIMEOUT_MS });
    }
  });
});

describe('failed attempts', () => {
  it('does not follow a redirect: a 3xx is a failure', async () => {
    const e = await endpoint(h);
    h.receiver.on(e.path, (res) => {
      res.statusCode = 302;
      res.setHeader('location', h.receiver.url('/elsewhere'));
      res.end();
    });
    await createLead(h, e.org);
    const d = await latestDelivery(h, e, pendingAttempt(1));
    expect(d).toMatchObject({ responseStatus: 302, error: 'Redirects are not followed (HTTP 302)' });
    expect(h.receiver.requests('/elsewhere')).toEqual([]);
  });

  it('reports a connection reset', async () => {
    const e = await endpoint(h);
    h.receiver.on(e.path, (_res, _n, req) => req.socket.destroy());
    await createLead(h, e.org);
    const d = await latestDelivery(h, e, pendingAttempt(1));
    expect(d).toMatchObject({ responseStatus: null, error: 'Connection reset by the endpoint' });
  });

  it('reads at most 64 KB of an answer and keeps a 1 KB excerpt', async () => {
    const e = await endpoint(h);
    h.receiver.on(e.path, (res) => res.end('é'.repeat(600_000)));
    await createLead(h, e.org);
    const d = await latestDelivery(h, e, (x) => expect(x.status).toBe('SUCCEEDED'));
    expect(Buffer.byteLength(d.responseExcerpt)).toBe(1024);
    expect(d.responseExcerpt).toBe('é'.repeat(512));
  });
});

describe('disabling endpoints', () => {
  it('410 Gone disables the endpoint at once', async () => {
    const e = await endpoint(h);
    h.receiver.on(e.path, (res) => {
      res.statusCode = 410;
      res.end('gone');
    });
    await createLead(h, e.org);
    const d = await latestDelivery(h, e, (x) => expect(x.status).toBe('FAILED'));
    expect(d).toMatchObject({ attempt: 1, responseStatus: 410, nextAttemptAt: null, error: expect.stringContaining('410') });
    expect(await webhook(h, e)).toMatchObject({ enabled: false, disabledReason: 'ENDPOINT_GONE' });
    await createLead(h, e.org);
    await h.settled();
    expect(await deliveries(h, e)).toHaveLength(1);
    expect(h.receiver.requests(e.path)).toHaveLength(1);
  });

  it('an endpoint failing every attempt for 3 days is disabled and flagged; its queue is cancelled', async () => {
    const e = await endpoint(h);
    h.receiver.on(e.path, (res) => {
      res.statusCode = 500;
      res.end();
    });
    const since = h.clock.now().toISOString();
    await createLead(h, e.org);
    await latestDelivery(h, e, pendingAttempt(1));

    h.clock.advance(3 * DAY - MINUTE);
    await latestDelivery(h, e, pendingAttempt(2));
    expect(await webhook(h, e)).toMatchObject({ enabled: true, failingSince: since });

    h.clock.advance(5 * MINUTE);
    await eventually(async () => expect(await webhook(h, e)).toMatchObject({ enabled: false, disabledReason: 'FAILING_FOR_3_DAYS', failingSince: since }));
    const d = await latestDelivery(h, e, (x) => expect(x.status).toBe('FAILED'));
    expect(d).toMatchObject({ attempt: 3, nextAttemptAt: null, error: 'Endpoint disabled: every attempt failed for 3 days' });

    await createLead(h, e.org);
    await h.settled();
    expect(h.receiver.requests(e.path)).toHaveLength(3);

    // Re-enabling clears the flag; a manual re-send then goes out.
    h.receiver.on(e.path, (res) => res.end('back'));
    await call(h.t.app, 'PATCH', `/webhooks/${e.id}`, { auth: e.org.auth, body: { enabled: true } });
    expect(await webhook(h, e)).toMatchObject({ enabled: true, disabledReason: null, failingSince: null });
    await call(h.t.app, 'POST', `/webhooks/${e.id}/deliveries/${d.id}/retry`, { auth: e.org.auth });
    await latestDelivery(h, e, (x) => expect(x).toMatchObject({ status: 'SUCCEEDED', attempt: 4 }));
  });
});

describe('retention', () => {
  it('prunes finished deliveries and their attempts after 30 days, keeps younger ones', async () => {
    const e = await endpoint(h);
    await createLead(h, e.org);
    const old = await latestDelivery(h, e, (d) => expect(d.status).toBe('SUCCEEDED'));
    h.clock.advance(30 * DAY + MINUTE);
    await createLead(h, e.org);
    await eventually(async () => {
      const log = await deliveries(h, e);
      expect(log.map((d) => d.status)).toEqual(['SUCCEEDED']);
      expect(log[0].id).not.toBe(old.id);
    });
    const attempts = await h.t.ctx.database.db.selectFrom('webhook_attempts').select('delivery_id').where('delivery_id', '=', old.id).execute();
    expect(attempts).toEqual([]);
  });
});
