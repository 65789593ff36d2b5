import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { ManualClock } from '../../src/lib/clock.js';
import { newId } from '../../src/lib/ids.js';
import { openFeedCursor, pruneEvents, sealFeedCursor } from '../../src/modules/events/feed.service.js';
import { buildEvent } from '../../src/modules/events/events.js';
import { listEvents, recordEvent } from '../../src/modules/events/outbox.store.js';
import { comparePositions, type OutboxPosition } from '../../src/modules/events/outbox-order.js';
import { undispatchedEvents } from '../../src/modules/webhooks/dispatch-lag.store.js';
import { WebhookDispatcher } from '../../src/modules/webhooks/dispatcher.js';
import { call, expectError } from '../helpers/http.js';
import { eventually } from '../helpers/receiver.js';
import { addKey, seedOrg, type Seeded } from '../helpers/seed.js';
import { buildTestApp, type TestApp } from '../helpers/test-app.js';

let t: TestApp;
const clock = new ManualClock('2026-03-01T00:00:00.000Z');
beforeAll(async () => {
  t = await buildTestApp({ clock });
});
afterAll(() => t.close());

/** What a feed cursor holds (events/feed.service.ts): sealed for clients, opened here to know when it has moved far enough. */
const positionOf = (organizationId: string, cursor: string): OutboxPosition => openFeedCursor(t.ctx, organizationId, cursor);

async function newestPosition(): Promise<OutboxPosition> {
  const query = t.ctx.database.dialect === 'postgres'
    ? sql<{ txid: string; seq: string }>`select txid::text as txid, seq from events order by txid desc, seq desc limit 1`
    : sql<{ txid: string; seq: string }>`select '0' as txid, seq from events order by seq desc limit 1`;
  const [row] = (await query.execute(t.ctx.database.db)).rows;
  return { txid: row!.txid, seq: Number(row!.seq) };
}

const feed = (who: { auth: Record<string, string> }, query = '') => call(t.app, 'GET', `/events${query}`, { auth: who.auth });

async function changes(who: Seeded) {
  const lead = (await call(t.app, 'POST', '/leads', { auth: who.auth, body: { name: 'Ada', email: 'ada@example.com' } })).body.data.lead.id;
  await call(t.app, 'PATCH', `/leads/${lead}`, { auth: who.auth, body: { status: 'CONTACTED' } });
  const account = (await call(t.app, 'POST', '/accounts', { auth: who.auth, body: { name: 'Analytical Engines' } })).body.data.account.id;
  const deal = (await call(t.app, 'POST', '/deals', { auth: who.auth, body: { name: 'Engine', accountId: account } })).body.data.deal.id;
  return { lead, account, deal };
}

/**
 * Pages from `after` until `expected` events were read. On PostgreSQL an event shows once every transaction older
 * than it has ended, and other databases' transactions on the same server count too: so wait, never assume.
 */
async function readAll(who: { auth: Record<string, string> }, query: string, expected: number, after?: string) {
  const events: any[] = [];
  let cursor = after;
  await eventually(async () => {
    const res = await feed(who, `?${query}${cursor ? `&after=${cursor}` : ''}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    events.push(...res.body.data.events);
    cursor = res.body.data.nextCursor;
    expect(events.length).toBeGreaterThanOrEqual(expected);
  }, 15_000, 20);
  expect(events).toHaveLength(expected);
  return { events, cursor: cursor! };
}

describe('GET /events', () => {
  it('pages through the webhook bodies oldest first, and polls on from an empty page', async () => {
    const who = await seedOrg(t.ctx, { rateLimitPerMinute: 10_000 });
    await changes(who);
    await changes(who);
    const stored = await listEvents(t.ctx.database.db, who.orgId);
    expect(stored).toHaveLength(8);
    const { events, cursor } = await readAll(who, 'limit=3', 8);
    // The same bodies and ids webhooks deliver, in outbox order.
    expect(events).toEqual(stored);
    expect(events.map((e) => e.type)).toEqual(['lead.created', 'lead.updated', 'account.created', 'deal.created', 'lead.created', 'lead.updated', 'account.created', 'deal.created']);
    const empty = await feed(who, `?after=${cursor}`);
    expect(empty.body.data).toEqual({ events: [], nextCursor: cursor });
    const { lead } = await changes(who);
    const next = await readAll(who, 'limit=1', 1, cursor);
    expect(next.events).toMatchObject([{ type: 'lead.created', data: { id: lead } }]);
    expect(next.cursor).not.toBe(cursor);
  });

  it('the body is byte for byte the stored webhook body', async () => {
    const who = await seedOrg(t.ctx);
    await changes(who);
    await readAll(who, '', 4);
    const res = await t.app.inject({ method: 'GET', url: '/api/public/v1/events?limit=1', headers: who.auth });
    const [row] = await t.ctx.database.db.selectFrom('events').select('payload').where('organization_id', '=', who.orgId).orderBy('seq').limit(1).execute();
    expect(res.body).toContain(`"events":[${row!.payload}]`);
  });

  it('filters by types and by the key\'s read scopes, never showing another organization', async () => {
    const who = await seedOrg(t.ctx, { rateLimitPerMinute: 10_000 });
    const other = await seedOrg(t.ctx);
    await changes(who);
    await changes(other);
    expect((await readAll(who, 'types=deal.created,lead.updated', 2)).events.map((e) => e.type)).toEqual(['lead.updated', 'deal.created']);
    const leadsOnly = await addKey(t.ctx, who.orgId, ['leads:read']);
    const seen = (await readAll(leadsOnly, '', 2)).events;
    expect(seen.map((e) => e.type)).toEqual(['lead.created', 'lead.updated']);
    expect(seen.every((e) => e.organization === who.orgId)).toBe(true);
    expect(expectError(await feed(leadsOnly, '?types=deal.created'), 403, 'INSUFFICIENT_SCOPE')).toEqual([]);
    expectError(await feed(await addKey(t.ctx, who.orgId, ['leads:write', 'webhooks:read']), ''), 403, 'INSUFFICIENT_SCOPE');
  });

  it('names a parameter sent twice as such, not as a wrong type (types=a&types=b; lists too)', async () => {
    const who = await seedOrg(t.ctx);
    const message = 'is given more than once: send it once (where a parameter takes several values, they go comma-separated in one)';
    expect(expectError(await feed(who, '?types=lead.created&types=deal.created'), 400, 'VALIDATION_FAILED')).toEqual([{ field: 'types', code: 'invalid_type', message }]);
    const leads = await call(t.app, 'GET', '/leads?status=NEW&status=CONTACTED&limit=x', { auth: who.auth });
    expect(expectError(leads, 400, 'VALIDATION_FAILED')).toEqual([
      { field: 'status', code: 'invalid_type', message },
      { field: 'limit', code: 'invalid_type', message: 'must be integer' },
    ]);
  });

  it('reads types as written by hand: spaces after the commas and a trailing comma are ignored, an empty list is named', async () => {
    const who = await seedOrg(t.ctx, { rateLimitPerMinute: 10_000 });
    await changes(who);
    const { events } = await readAll(who, `types=${encodeURIComponent(' lead.created, deal.created,')}`, 2);
    expect(events.map((e) => e.type)).toEqual(['lead.created', 'deal.created']);
    expect(expectError(await feed(who, '?types='), 400, 'VALIDATION_FAILED')).toEqual([
      { field: 'types', code: 'invalid_value', message: 'names no event type: list them comma-separated (types=lead.created,deal.created), or leave types out for every type' },
    ]);
  });

  it('leaves webhook.test out of the feed', async () => {
    const who = await seedOrg(t.ctx);
    const actor = { type: 'SYSTEM' as const, id: 'test', channel: 'API' as const };
    const check = buildEvent({ type: 'webhook.test', organizationId: who.orgId, object: 'webhook', objectId: who.keyId, description: 'Test', changes: { before: {}, after: {} }, actor, now: clock.now() });
    await recordEvent(t.ctx.database.db, check);
    expect((await listEvents(t.ctx.database.db, who.orgId)).map((e) => e.type)).toEqual(['webhook.test']);
    expect((await feed(who)).body.data.events).toEqual([]);
    expect(expectError(await feed(who, '?types=webhook.test'), 400, 'VALIDATION_FAILED')[0]).toMatchObject({ field: 'types' });
  });

  it('answers 400 naming an unknown type, an unknown parameter, a bad cursor or limit', async () => {
    const who = await seedOrg(t.ctx);
    const unknownType = expectError(await feed(who, '?types=lead.created,lead.exploded'), 400, 'VALIDATION_FAILED');
    expect(unknownType[0]!.message).toContain('lead.exploded');
    expect(unknownType[0]!.message).not.toContain('lead.created;');
    for (const types of ['', ',', ' , ']) {
      const empty = await feed(who, `?types=${encodeURIComponent(types)}`);
      expect(expectError(empty, 400, 'VALIDATION_FAILED')).toEqual([{ field: 'types', code: 'invalid_value', message: expect.stringContaining('names no event type') }]);
      expect(empty.body.message).not.toContain('Unknown event type');
    }
    expect(JSON.stringify(expectError(await feed(who, '?since=0'), 400, 'VALIDATION_FAILED'))).toContain('since');
    const badCursor = await feed(who, '?after=not-a-cursor');
    expect(expectError(badCursor, 400, 'VALIDATION_FAILED')[0]).toMatchObject({ field: 'after' });
    // Named once, like every field error ("after: after must be…" read as a stutter).
    expect(badCursor.body.message).toMatch(/^after: must be a nextCursor/);
    // Sealed by this server, but beyond every event or transaction this database has numbered (kept across a restore of an older backup).
    for (const ahead of [{ txid: '0', seq: 9_999_999_999 }, { txid: '99999999999999999', seq: 1 }]) {
      expect(expectError(await feed(who, `?after=${sealFeedCursor(t.ctx, who.orgId, ahead)}`), 400, 'VALIDATION_FAILED')[0]).toMatchObject({ field: 'after', code: 'invalid_cursor' });
    }
    expectError(await feed(who, '?limit=1001'), 400, 'VALIDATION_FAILED');
    expectError(await feed(who, '?limit=0'), 400, 'VALIDATION_FAILED');
    expect((await feed(who, '?limit=1000')).status).toBe(200);
  });

  it('is documented: the webhook body by reference, the 410, the parameters', async () => {
    const doc = (await call(t.app, 'GET', '/api/public/v1/openapi.json')).body;
    const op = doc.paths['/api/public/v1/events'].get;
    expect(op.description).toContain('commit order');
    expect(op.parameters.map((p: { name: string }) => p.name).sort()).toEqual(['after', 'limit', 'types']);
    expect(JSON.stringify(op.responses['200'])).toContain('#/components/schemas/WebhookEvent');
    expect(op.responses['410']).toEqual({ $ref: '#/components/responses/CursorExpired' });
    expect(doc.components.responses.CursorExpired.description).toContain('CURSOR_EXPIRED');
    expect(doc.components.schemas.WebhookEvent.required).toContain('id');
    // The example reads like a real page: event ids as the feed hands them out, not item ids.
    const [example] = op.responses['200'].content['application/json'].example.data.events;
    expect(example).toMatchObject({ id: expect.stringMatching(/^evt_/), type: 'lead.created', data: { object: 'lead', description: 'Lead created' } });
  });

  it('spends a rate-limit unit like every route', async () => {
    const who = await seedOrg(t.ctx, { rateLimitPerMinute: 2 });
    expect((await feed(who)).headers['x-ratelimit-remaining']).toBe('1');
    await feed(who);
    expectError(await feed(who), 429, 'RATE_LIMITED');
  });
});

describe('retention', () => {
  /** Runs a dispatcher until its fan-out has passed every event, as a running server's would. */
  async function fanOutEverything() {
    const dispatcher = new WebhookDispatcher(t.ctx, { pollIntervalMs: 20 }).start();
    await eventually(async () => expect((await undispatchedEvents(t.ctx.database.db, t.ctx.database.dialect)).count).toBe(0));
    await dispatcher.stop();
  }

  it('prunes what the dispatcher has passed once past EVENT_RETENTION_DAYS; an older cursor answers 410', async () => {
    clock.set('2026-03-01T00:00:00.000Z');
    const who = await seedOrg(t.ctx, { rateLimitPerMinute: 10_000 });
    await changes(who);
    const { cursor: start } = await readAll(who, '', 4);
    const afterFirst = (await readAll(who, 'limit=1', 1)).cursor;
    clock.set('2026-03-20T00:00:00.000Z');
    const { lead } = await changes(who);
    clock.set('2026-04-05T00:00:00.000Z'); // 35 days after the first changes, 16 after the second
    // Not yet passed by the fan-out: kept, however old.
    expect(await pruneEvents(t.ctx)).toBe(0);
    await fanOutEverything();
    // The dispatcher's own housekeeping may already have pruned them: what counts is what is left.
    await pruneEvents(t.ctx);
    expect((await listEvents(t.ctx.database.db, who.orgId)).map((e) => e.createdAt.slice(0, 10))).toEqual(Array(4).fill('2026-03-20'));
    expectError(await feed(who, `?after=${afterFirst}`), 410, 'CURSOR_EXPIRED');
    // A cursor that had read everything pruned has lost nothing: it goes on.
    expect((await readAll(who, '', 4, start)).events).toMatchObject([{ type: 'lead.created', data: { id: lead } }, { type: 'lead.updated' }, { type: 'account.created' }, { type: 'deal.created' }]);
    // Without a cursor: from the oldest retained event.
    const fresh = (await readAll(who, '', 4)).events;
    expect(fresh[0].data.id).toBe(lead);
  });

  it('keeps an event that a delivery in the webhook log still names, and every later one', async () => {
    clock.set('2026-05-01T00:00:00.000Z');
    const who = await seedOrg(t.ctx, { rateLimitPerMinute: 10_000 });
    await changes(who);
    const [first] = await listEvents(t.ctx.database.db, who.orgId);
    const db = t.ctx.database.db;
    const at = clock.now().toISOString();
    await db.insertInto('webhook_endpoints').values({ id: newId(), organization_id: who.orgId, url: 'https://example.com/hook', events: '["*"]', enabled: 0, secret_enc: 'x', created_at: at, updated_at: at }).execute();
    const endpoint = await db.selectFrom('webhook_endpoints').select('id').where('organization_id', '=', who.orgId).executeTakeFirstOrThrow();
    // Re-sent lately: the log keeps it (30 days from its creation), so its event must stay re-sendable.
    const resent = '2026-06-10T00:00:00.000Z';
    await db.insertInto('webhook_deliveries').values({ id: newId(), organization_id: who.orgId, endpoint_id: endpoint.id, event_id: first!.id, event_type: first!.type, status: 'SUCCEEDED', attempts: 1, due_at: null, lease_token: null, error: null, created_at: resent, updated_at: resent }).execute();
    clock.set('2026-06-15T00:00:00.000Z');
    await fanOutEverything();
    await pruneEvents(t.ctx);
    expect(await listEvents(db, who.orgId)).toHaveLength(4);
    await db.deleteFrom('webhook_deliveries').where('event_id', '=', first!.id).execute();
    expect(await pruneEvents(t.ctx)).toBeGreaterThanOrEqual(4);
    expect(await listEvents(db, who.orgId)).toEqual([]);
  });

  it('moves the cursor of a reader with nothing to see past the events it cannot see, so their pruning does not expire it', async () => {
    clock.set('2026-08-01T00:00:00.000Z');
    const quiet = await seedOrg(t.ctx, { rateLimitPerMinute: 10_000 });
    const busy = await seedOrg(t.ctx, { rateLimitPerMinute: 10_000 });
    const accountsOnly = await addKey(t.ctx, busy.orgId, ['accounts:read'], { rateLimitPerMinute: 10_000 });
    const firstQuiet = (await feed(quiet)).body.data.nextCursor as string;
    const firstScoped = (await feed(accountsOnly)).body.data.nextCursor as string;
    await changes(busy);
    await changes(busy); // the accounts-only key's last event is followed by a deal's
    // Polled after the other organization (and the other scopes) wrote: empty pages, and each cursor moves on
    // to the newest event (on PostgreSQL once every older transaction has ended).
    const newest = await newestPosition();
    const pollPast = async (who: { auth: Record<string, string> }, organizationId: string, from: string) => {
      let cursor = from;
      await eventually(async () => {
        const res = await feed(who, `?after=${cursor}`);
        expect(res.body.data.events).toEqual([]);
        cursor = res.body.data.nextCursor;
        expect(comparePositions(positionOf(organizationId, cursor), newest)).toBeGreaterThanOrEqual(0);
      });
      return cursor;
    };
    const quietCursor = await pollPast(quiet, quiet.orgId, firstQuiet);
    const scoped = await readAll(accountsOnly, '', 2, firstScoped);
    expect(scoped.events.map((e) => e.type)).toEqual(['account.created', 'account.created']);
    const scopedCursor = await pollPast(accountsOnly, busy.orgId, scoped.cursor);
    clock.set('2026-09-15T00:00:00.000Z');
    await fanOutEverything();
    await pruneEvents(t.ctx);
    expect(await listEvents(t.ctx.database.db, busy.orgId)).toEqual([]);
    // Nothing either reader could see was lost: they go on.
    expect((await feed(quiet, `?after=${quietCursor}`)).status).toBe(200);
    expect((await feed(accountsOnly, `?after=${scopedCursor}`)).status).toBe(200);
    // A cursor that stayed where it was would have expired with the other organization's events.
    expectError(await feed(quiet, `?after=${firstQuiet}`), 410, 'CURSOR_EXPIRED');
  });
});
