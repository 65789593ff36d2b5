import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { closeContext, createContext, type AppContext } from '../src/context.js';
import { sealContact } from '../src/crypto/contact-fields.js';
import { inTransaction } from '../src/db/transaction.js';
import { buildEvent } from '../src/modules/events/events.js';
import { recordEvent } from '../src/modules/events/outbox.store.js';
import type { Clock } from '../src/lib/clock.js';
import { newId } from '../src/lib/ids.js';
import { LEAD_STATUSES, type CreateLeadBody } from '../src/modules/leads/leads.schemas.js';
import { createLead } from '../src/modules/leads/leads.service.js';
import { insertLeads, type StoredLead } from '../src/modules/leads/leads.store.js';
import { createApiKey, createOrganization, createUser, revokeApiKey } from '../src/modules/orgs/orgs.service.js';
import { LEAD_SOURCES } from '../src/modules/orgs/rules.schemas.js';
import { setAssignmentRules } from '../src/modules/orgs/rules.service.js';

/** The real app on a throw-away SQLite file (or on `databaseUrl`, an empty database), for the screenshot and timing scripts. */
export async function startDemoApp(opts: { clock?: Clock; databaseUrl?: string; env?: Record<string, string> } = {}): Promise<{ app: FastifyInstance; ctx: AppContext; close(): Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'crm-demo-'));
  const url = opts.databaseUrl ?? join(dir, 'crm.db');
  const config = loadConfig({ DATABASE_URL: url, ENCRYPTION_KEY: randomBytes(32).toString('base64'), LOG_LEVEL: 'silent', ...opts.env }, () => undefined);
  const ctx = await createContext(config, opts.clock ? { clock: opts.clock } : {});
  const app = await buildApp(ctx, { logger: false });
  return {
    app,
    ctx,
    close: async () => {
      await app.close();
      await closeContext(ctx);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const FIRST = ['Ada', 'Grace', 'Alan', 'Marie', 'Katherine', 'Tim', 'Hedy', 'Linus', 'Barbara', 'Dennis', 'Margaret', 'Ken', 'Frances', 'John', 'Radia', 'Edsger', 'Sophie', 'Claude', 'Annie', 'Vint'];
const LAST = ['Lovelace', 'Hopper', 'Turing', 'Curie', 'Johnson', 'Berners-Lee', 'Lamarr', 'Torvalds', 'Liskov', 'Ritchie', 'Hamilton', 'Thompson', 'Allen', 'McCarthy', 'Perlman', 'Dijkstra', 'Wilson', 'Shannon', 'Easley', 'Cerf'];
const COMPANIES = ['Northwind Traders', 'Contoso', 'Fabrikam', 'Tailspin Toys', 'Wide World Importers', 'Adventure Works', 'Litware', 'Proseware', 'Woodgrove Bank', 'Fourth Coffee'];
/** Most leads are new or contacted; fewer qualify, fewer still convert. */
const STATUS_MIX = [...Array(9).fill('NEW'), ...Array(6).fill('CONTACTED'), 'QUALIFIED', 'QUALIFIED', 'QUALIFIED', 'UNQUALIFIED', 'UNQUALIFIED', 'CONVERTED'] as (typeof LEAD_STATUSES)[number][];
const TITLES = ['CTO', 'Head of Sales', 'Operations Manager', 'Founder', 'Procurement Lead', 'VP Marketing'];

/** A deterministic lead for position `i` (names, companies and statuses cycle). */
function demoLead(i: number): CreateLeadBody {
  const first = FIRST[i % FIRST.length]!;
  const last = LAST[Math.floor(i / FIRST.length) % LAST.length]!;
  return {
    name: `${first} ${last}`,
    email: `${first}.${last}.${i}@example.com`.toLowerCase().replace(/[^a-z0-9.@-]/g, ''),
    phoneNumber: `+1415555${String(1000 + (i % 9000)).padStart(4, '0')}`,
    company: COMPANIES[i % COMPANIES.length]!,
    title: TITLES[i % TITLES.length]!,
    status: STATUS_MIX[(i * 5) % STATUS_MIX.length]!,
    source: LEAD_SOURCES[(i * 3) % LEAD_SOURCES.length]!,
  };
}

export interface Demo {
  orgId: string;
  admin: { email: string; password: string };
  member: { email: string; password: string };
  adminId: string;
  /** The two sales reps who own leads, accounts and deals. */
  reps: string[];
}

/**
 * A realistic organization: an admin and a member who sign in, two sales reps, keys (one revoked),
 * assignment rules, and `leads` leads: the first `withEvents` through the service (so rules run and the
 * activity log fills), the rest bulk-inserted (encrypted like any other) to reach volume quickly.
 */
export async function seedDemo(ctx: AppContext, opts: { leads: number; withEvents: number; clock?: { advance(ms: number): void } }): Promise<Demo> {
  const org = await createOrganization(ctx, { name: 'Northwind Traders', timezone: 'Europe/Paris' });
  const admin = { email: 'alex.martin@northwind.example', password: 'demo password 1' };
  const member = { email: 'jordan.lee@northwind.example', password: 'demo password 2' };
  const adminId = (await createUser(ctx, { organizationId: org.id, name: 'Alex Martin', ...admin, admin: true })).id;
  await createUser(ctx, { organizationId: org.id, name: 'Jordan Lee', ...member });
  const sam = (await createUser(ctx, { organizationId: org.id, name: 'Sam Rivera', email: 'sam.rivera@northwind.example' })).id;
  const priya = (await createUser(ctx, { organizationId: org.id, name: 'Priya Shah', email: 'priya.shah@northwind.example' })).id;
  const web = await createApiKey(ctx, { organizationId: org.id, userId: adminId, name: 'Website forms', scopes: ['leads:write'] });
  await createApiKey(ctx, { organizationId: org.id, userId: adminId, name: 'Data warehouse export', scopes: ['leads:read', 'accounts:read', 'deals:read'], expiresAt: '2027-01-01T00:00:00.000Z' });
  const old = await createApiKey(ctx, { organizationId: org.id, name: 'Old Zapier integration', scopes: ['leads:read', 'leads:write'] });
  await revokeApiKey(ctx, old.id);
  await setAssignmentRules(ctx.database, org.id, { rules: [
    { id: 'website', match: { source: 'WEBSITE' }, assign: { type: 'round_robin', userIds: [sam, priya] } },
    { id: 'referrals', match: { source: 'REFERRAL' }, assign: { type: 'user', userId: priya } },
  ] }, ctx.clock.now());

  const bulk = opts.leads - opts.withEvents;
  const batch: Omit<StoredLead, 'seq'>[] = [];
  const system = { type: 'SYSTEM' as const, id: 'import', channel: 'API' as const };
  const flush = async () => {
    const leads = batch.splice(0);
    await ctx.database.db.transaction().execute(async (trx) => {
      await insertLeads(trx, leads);
      for (const l of leads) {
        const event = buildEvent({ type: 'lead.created', organizationId: org.id, object: 'lead', objectId: l.id, description: 'Lead imported', changes: { before: {}, after: { name: l.name } }, actor: system, now: new Date(l.createdAt) });
        await recordEvent(trx, event);
      }
    });
  };
  for (let i = 0; i < bulk; i++) {
    const lead = demoLead(i + opts.withEvents);
    const id = newId(ctx.clock.now());
    const where = { table: 'leads', rowId: id, organizationId: org.id };
    const email = sealContact(ctx, 'email', where, lead.email!);
    const phone = sealContact(ctx, 'phone', where, lead.phoneNumber!);
    const now = ctx.clock.now().toISOString();
    batch.push({
      id, organizationId: org.id, name: lead.name, emailEnc: email.enc, emailBidx: email.bidx, phoneEnc: phone.enc, phoneBidx: phone.bidx,
      source: lead.source ?? null, sourceCampaign: null, status: lead.status ?? 'NEW', company: lead.company ?? null, title: lead.title ?? null,
      notes: null, ownerId: null, accountId: null, duplicateOf: null, externalId: null, custom: null, createdAt: now, updatedAt: now, deletedAt: null,
    });
    if (batch.length === 5_000) await flush();
  }
  if (batch.length) await flush();

  const viaApi = { organizationId: org.id, actor: { type: 'API_KEY' as const, id: web.id, channel: 'API' as const } };
  const viaConsole = { organizationId: org.id, actor: { type: 'USER' as const, id: adminId, channel: 'UI' as const } };
  for (let i = opts.withEvents - 1; i >= 0; i--) {
    opts.clock?.advance(17 * 60_000);
    await inTransaction(ctx, (trx) => createLead(ctx, trx, i % 4 === 0 ? viaConsole : viaApi, demoLead(i)));
  }
  return { orgId: org.id, admin, member, adminId, reps: [sam, priya] };
}
