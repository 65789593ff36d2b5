import { expect } from 'vitest';
import { ManualClock } from '../../src/lib/clock.js';
import { undispatchedEvents } from '../../src/modules/webhooks/dispatch-lag.store.js';
import { WebhookDispatcher, type DispatcherOptions } from '../../src/modules/webhooks/dispatcher.js';
import { buildTestApp, type TestApp } from './test-app.js';
import { call } from './http.js';
import { Receiver, eventually } from './receiver.js';
import { seedOrg, type Seeded } from './seed.js';

/** For the timeout cases only (see `restart`); the others keep a roomy timeout, as a busy machine can be slow. */
export const TEST_TIMEOUT_MS = 300;

/**
 * The real app with private networks allowed (the receiver is on 127.0.0.1), a business clock the test
 * moves (retries, 3-day rule, retention), a wall clock for signature timestamps, a receiver and a dispatcher.
 */
export interface Harness {
  t: TestApp;
  clock: ManualClock;
  wall: ManualClock;
  receiver: Receiver;
  dispatcher: WebhookDispatcher;
  /**
   * Waits until the fan-out has taken every committed event and the dispatcher has nothing in flight. The
   * dispatcher's own settled() can return while the fan-out still waits for events to become visible in order
   * (PostgreSQL), which let a test change an endpoint before events created earlier had reached it.
   */
  settled(): Promise<void>;
  /** Replaces the running dispatcher (stopping it first). */
  restart(opts?: DispatcherOptions): Promise<WebhookDispatcher>;
  close(): Promise<void>;
}

export async function startHarness(): Promise<Harness> {
  const clock = new ManualClock(new Date());
  const wall = new ManualClock(new Date());
  const t = await buildTestApp({ clock, env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_TIMEOUT_MS: '5000' } });
  const receiver = await Receiver.start();
  const make = (opts: DispatcherOptions = {}) =>
    new WebhookDispatcher(t.ctx, { pollIntervalMs: 20, random: () => 0.5, signingClock: wall, ...opts }).start();
  const h: Harness = {
    t,
    clock,
    wall,
    receiver,
    dispatcher: make(),
    settled: async () => {
      await eventually(async () => expect((await undispatchedEvents(t.ctx.database.db, t.ctx.database.dialect)).count).toBe(0));
      await h.dispatcher.settled();
    },
    restart: async (opts) => {
      await h.dispatcher.stop();
      h.dispatcher = make(opts);
      return h.dispatcher;
    },
    close: async () => {
      await receiver.close();
      await h.dispatcher.stop();
      await t.close();
    },
  };
  return h;
}

export interface Endpoint {
  org: Seeded;
  id: string;
  secret: string;
  path: string;
}

let paths = 0;

/** A fresh organization (so other tests' events never reach it) with one endpoint on a fresh receiver path. */
export async function endpoint(h: Harness, events: string[] = ['*'], org?: Seeded): Promise<Endpoint> {
  const owner = org ?? (await seedOrg(h.t.ctx, { rateLimitPerMinute: 100_000 }));
  const path = `/hook-${++paths}`;
  const res = await call(h.t.app, 'POST', '/webhooks', { auth: owner.auth, body: { url: h.receiver.url(path), events } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { org: owner, id: res.body.data.webhook.id, secret: res.body.data.webhook.secret, path };
}

export async function createLead(h: Harness, org: Seeded, body: Record<string, unknown> = { name: 'Ada' }) {
  const res = await call(h.t.app, 'POST', '/leads', { auth: org.auth, body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body.data.lead;
}

export async function deliveries(h: Harness, e: Endpoint): Promise<any[]> {
  const res = await call(h.t.app, 'GET', `/webhooks/${e.id}/deliveries?limit=100`, { auth: e.org.auth });
  expect(res.status).toBe(200);
  return res.body.data.deliveries;
}

/** Waits until the endpoint's newest delivery satisfies `check` (an expect-style assertion). */
export async function latestDelivery(h: Harness, e: Endpoint, check: (d: any) => void, timeoutMs = 15_000): Promise<any> {
  return eventually(async () => {
    const [d] = await deliveries(h, e);
    expect(d).toBeDefined();
    check(d);
    return d;
  }, timeoutMs);
}

export async function webhook(h: Harness, e: Endpoint): Promise<any> {
  return (await call(h.t.app, 'GET', `/webhooks/${e.id}`, { auth: e.org.auth })).body.data.webhook;
}
