import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../helpers/http.js';
import { eventually } from '../helpers/receiver.js';
import { createLead, deliveries, endpoint, startHarness, type Endpoint, type Harness } from '../helpers/webhooks.js';

/**
 * An endpoint that isn't being delivered to (here: answering 500) stops getting a delivery row per event once
 * `deferAt` of its deliveries wait; its later events stay in the outbox and are queued when it answers again.
 * Small limits, so that a few dozen events show it.
 */
const backlog = { deferAt: 5, resumeAt: 2, catchUpBatch: 4 };
const SECOND = 1000;
let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  await h.restart({ backlog });
});
afterAll(() => h.close());

/** The endpoint answers 500 until `answering` is set; `acknowledged` lists the lead ids it answered 200, in order. */
function failingUntilToggled(e: Endpoint) {
  const state = { answering: false, acknowledged: [] as string[] };
  h.receiver.on(e.path, (res) => {
    if (state.answering) state.acknowledged.push(JSON.parse(h.receiver.requests(e.path).at(-1)!.body).data.id);
    res.statusCode = state.answering ? 200 : 500;
    res.end();
  });
  return state;
}

async function backlogOf(e: Endpoint) {
  const row = await h.t.ctx.database.db.selectFrom('webhook_endpoints').select('backlog_seq').where('id', '=', e.id).executeTakeFirstOrThrow();
  return row.backlog_seq;
}

describe('deferred events of an endpoint that is not answering', () => {
  it('keeps its queue short while it fails, then delivers every event once when it answers again', async () => {
    const dead = await endpoint(h);
    const healthy = await endpoint(h, ['*'], dead.org);
    const state = failingUntilToggled(dead);
    const leads: string[] = [];
    // One event per fan-out: the queue is measured once per fan-out batch, so a batch that gathered several
    // events (as under load) would pass deferAt by its size.
    for (let i = 0; i < 30; i++) {
      leads.push((await createLead(h, dead.org, { name: `Deferred ${i}` })).id);
      await h.settled();
    }
    await h.receiver.waitFor(healthy.path, 30);

    // The healthy endpoint of the same organization got all 30; the failing one has deferAt queued, no more.
    const queued = await deliveries(h, dead);
    expect(queued).toHaveLength(backlog.deferAt);
    expect(await backlogOf(dead)).not.toBeNull();

    // It answers again: its queued deliveries succeed at their retry, then the deferred events follow.
    state.answering = true;
    h.wall.advance(5 * SECOND);
    h.clock.advance(5 * SECOND);
    await eventually(() => {
      if (new Set(state.acknowledged).size < 30) throw new Error(`${new Set(state.acknowledged).size} of 30 leads delivered`);
    }, 20_000);
    await h.settled();
    // Once each: every lead acknowledged exactly once, one succeeded delivery row per event, no backlog left.
    expect([...state.acknowledged].sort()).toEqual([...leads].sort());
    const rows = await deliveries(h, dead);
    expect(rows).toHaveLength(30);
    expect(rows.every((d: { status: string }) => d.status === 'SUCCEEDED')).toBe(true);
    // The backlog ends at the catch-up pass that finds nothing left after it, which may follow the last delivery.
    await eventually(async () => expect(await backlogOf(dead)).toBeNull());
  });

  it('drops the deferred events with the queue when the endpoint is disabled', async () => {
    const dead = await endpoint(h);
    const state = failingUntilToggled(dead);
    // Each event fanned out (queued or deferred) before the next, and all before the endpoint is disabled: an
    // event the fan-out reached only after the endpoint is enabled again would be a new delivery, not a dropped one.
    for (let i = 0; i < 20; i++) {
      await createLead(h, dead.org, { name: `Dropped ${i}` });
      await h.settled();
    }
    expect(await backlogOf(dead)).not.toBeNull();

    expect((await call(h.t.app, 'PATCH', `/webhooks/${dead.id}`, { auth: dead.org.auth, body: { enabled: false } })).status).toBe(200);
    expect(await backlogOf(dead)).toBeNull();
    state.answering = true;
    expect((await call(h.t.app, 'PATCH', `/webhooks/${dead.id}`, { auth: dead.org.auth, body: { enabled: true } })).status).toBe(200);
    const after = await createLead(h, dead.org, { name: 'After re-enabling' });
    await eventually(() => expect(state.acknowledged).toContain(after.id));
    // Its success recorded before the clock jumps past its lease (else it is sent again: at least once).
    await h.settled();
    // Retry times of the cancelled deliveries come and go: none of them, nor any deferred event, is sent.
    h.clock.advance(10 * 60 * SECOND);
    h.wall.advance(10 * 60 * SECOND);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await h.settled();
    expect(state.acknowledged).toEqual([after.id]);
  });
});
