/**
 * Change feed benchmark: `GET /events?limit=1000` (through the app, app.inject: auth, rate limit, the SQL and the
 * response) at random depths of an outbox holding EVENTS events of the organization read, interleaved with as
 * many of another organization. Reports p50/p95/p99 per page of 1,000 events.
 *
 *   npm run bench -- --only feed [--postgres URL]
 */
import { sql } from 'kysely';
import type { Dialect } from '../src/config.js';
import { buildApp } from '../src/app.js';
import { inTransaction } from '../src/db/transaction.js';
import { buildEvent, ENCRYPTED } from '../src/modules/events/events.js';
import { recordEvents } from '../src/modules/events/outbox.store.js';
import { createApiKey, createOrganization } from '../src/modules/orgs/orgs.service.js';
import { fmt, openBench, percentiles, timeIt } from './lib.js';

const EVENTS = 100_000;
const PAGE = 1000;
const ACTOR = { type: 'API_KEY' as const, id: '6650f0a3a1b2c3d4e5f60703', channel: 'API' as const };

/** Realistic lead.created/lead.updated bodies, written in transactions of 1,000 alternating between the two organizations. */
async function seed(ctx: Parameters<typeof inTransaction>[0], organizations: string[]): Promise<void> {
  for (let batch = 0; batch < (EVENTS * organizations.length) / 1000; batch++) {
    const organizationId = organizations[batch % organizations.length]!;
    const events = Array.from({ length: 1000 }, (_, i) =>
      buildEvent({
        type: i % 3 === 0 ? 'lead.created' : 'lead.updated',
        organizationId,
        object: 'lead',
        objectId: `6650f0c8f1e2d3c4b5a6${String(i).padStart(4, '0')}`,
        description: 'Lead updated',
        changes: { before: { status: 'NEW', name: 'Ada' }, after: { status: 'CONTACTED', name: `Ada Lovelace ${batch}-${i}`, email: ENCRYPTED } },
        actor: ACTOR,
        now: new Date(),
      }),
    );
    await inTransaction(ctx, (trx) => recordEvents(trx, events));
  }
}

export async function runFeedBench(opts: { dialect: Dialect; pgUrl?: string; runs?: number }): Promise<void> {
  const { ctx, drop } = await openBench('feed', opts.dialect, opts.pgUrl);
  try {
    const org = await createOrganization(ctx, { name: 'Bench', timezone: 'UTC' });
    const other = await createOrganization(ctx, { name: 'Other', timezone: 'UTC' });
    const key = await createApiKey(ctx, { organizationId: org.id, scopes: ['leads:read'], name: 'bench', rateLimitPerMinute: 1_000_000_000 });
    await seed(ctx, [org.id, other.id]);
    // What autovacuum does soon after a bulk load; without statistics PostgreSQL sorts instead of using the index.
    if (opts.dialect === 'postgres') await sql`analyze events`.execute(ctx.database.db);
    const app = await buildApp(ctx, { logger: false });
    await app.ready();
    const get = async (after: string | undefined) => {
      const res = await app.inject({ method: 'GET', url: `/api/public/v1/events?limit=${PAGE}${after ? `&after=${after}` : ''}`, headers: { authorization: `Bearer ${key.key}` } });
      if (res.statusCode !== 200) throw new Error(`GET /events answered ${res.statusCode}: ${res.body}`);
      return JSON.parse(res.body).data as { events: unknown[]; nextCursor: string };
    };
    // One pass collects the cursor of every page (and checks the count); then pages at random depths are timed.
    const cursors: (string | undefined)[] = [undefined];
    let read = 0;
    for (;;) {
      const page = await get(cursors.at(-1));
      read += page.events.length;
      if (page.events.length === 0) break;
      cursors.push(page.nextCursor);
    }
    if (read !== EVENTS) throw new Error(`the feed returned ${read} events, expected ${EVENTS}`);
    const full = cursors.slice(0, -1);
    const times: number[] = [];
    for (let run = 0; run < (opts.runs ?? 200); run++) times.push(await timeIt(() => get(full[Math.floor(Math.random() * full.length)])));
    const p = percentiles(times);
    console.log(`\n## GET /events, pages of ${PAGE} (${opts.dialect}, ${EVENTS.toLocaleString('en')} events read among ${(2 * EVENTS).toLocaleString('en')}, app.inject)\n`);
    console.log('| runs | p50 (ms) | p95 (ms) | p99 (ms) | max (ms) |\n|---|---|---|---|---|');
    console.log(`| ${times.length} | ${fmt(p.p50)} | ${fmt(p.p95)} | ${fmt(p.p99)} | ${fmt(p.max)} |`);
    await app.close();
  } finally {
    await drop();
  }
}
