import type { AppContext } from '../src/context.js';
import { sealContacts } from '../src/crypto/contact-fields.js';
import { inTransaction } from '../src/db/transaction.js';
import { addDays, localDate } from '../src/lib/dates.js';
import { newId } from '../src/lib/ids.js';
import { createAccount } from '../src/modules/accounts/accounts.service.js';
import { createDeal } from '../src/modules/deals/deals.service.js';
import { DEFAULT_DEAL_STAGES } from '../src/modules/deals/stages.service.js';
import { createObject } from '../src/modules/objects/objects.service.js';
import { findObject } from '../src/modules/objects/objects.store.js';
import { buildNewRecord, createRecord } from '../src/modules/objects/records.service.js';
import { insertRecords } from '../src/modules/objects/records.store.js';
import type { Demo } from './demo-data.js';

const COMPANIES = ['Northwind Traders', 'Contoso', 'Fabrikam', 'Tailspin Toys', 'Wide World Importers', 'Adventure Works', 'Litware', 'Proseware', 'Woodgrove Bank', 'Fourth Coffee', 'Alpine Ski House', 'Coho Winery'];
const INDUSTRIES = ['Retail', 'Software', 'Manufacturing', 'Logistics', 'Banking', 'Hospitality'];
const DEALS = ['Annual licence', 'Pilot project', 'Support renewal', '40 seats', 'Data migration', 'Training days', 'Platform upgrade', 'Expansion to EMEA'];
const PROJECT_TITLES = ['Website relaunch', 'CRM rollout', 'Data warehouse', 'Mobile app', 'Onboarding flow', 'Security audit', 'Partner portal', 'Billing revamp'];

/** The Projects object of the demo: typed fields, a due date and stages. */
export const PROJECTS = {
  slug: 'projects',
  name: 'Projects',
  fields: [
    { key: 'title', label: 'Title', type: 'text' as const, required: true },
    { key: 'client', label: 'Client', type: 'text' as const },
    { key: 'priority', label: 'Priority', type: 'select' as const, options: ['low', 'medium', 'high'] },
    { key: 'budget', label: 'Budget', type: 'number' as const },
    { key: 'due_on', label: 'Due on', type: 'date' as const, role: 'due' as const },
    { key: 'notes', label: 'Notes', type: 'long_text' as const },
  ],
  stages: [{ key: 'planned', label: 'Planned' }, { key: 'in_progress', label: 'In progress' }, { key: 'done', label: 'Done' }],
};

/** Accounts, deals across every stage and a Projects object with records, through the services (events recorded). */
export async function seedCrmDemo(ctx: AppContext, demo: Demo, clock?: { advance(ms: number): void }): Promise<void> {
  const caller = { organizationId: demo.orgId, actor: { type: 'USER' as const, id: demo.adminId, channel: 'UI' as const } };
  const accounts: string[] = [];
  for (const [i, name] of COMPANIES.entries()) {
    clock?.advance(11 * 60_000);
    const domain = `${name.toLowerCase().replace(/[^a-z]+/g, '')}.example`;
    const account = await inTransaction(ctx, (trx) =>
      createAccount(ctx, trx, caller, { name, domain, email: `hello@${domain}`, phoneNumber: `+1206555${String(1000 + i * 37)}`, industry: INDUSTRIES[i % INDUSTRIES.length]!, website: `https://${domain}`, ownerId: demo.reps[i % 2]! }),
    );
    accounts.push(account.id);
  }
  const today = localDate(new Date(), 'Europe/Paris');
  for (let i = 0; i < 26; i++) {
    clock?.advance(7 * 60_000);
    const stage = DEFAULT_DEAL_STAGES[[0, 0, 1, 1, 1, 2, 2, 3, 4, 0, 1, 2, 3][i % 13]!]!.key;
    const amount = `${(4 + ((i * 7) % 23)) * 1250}.00`;
    await inTransaction(ctx, (trx) =>
      createDeal(ctx, trx, caller, { name: `${COMPANIES[i % COMPANIES.length]} — ${DEALS[i % DEALS.length]}`, stage, amount, currency: i % 5 === 0 ? 'USD' : 'EUR', accountId: accounts[i % accounts.length]!, ownerId: demo.reps[i % 2]!, expectedCloseDate: addDays(today, 10 + i * 4) }),
    );
  }
  await inTransaction(ctx, (trx) => createObject(ctx, trx, demo.orgId, PROJECTS));
  for (let i = 0; i < 14; i++) {
    clock?.advance(5 * 60_000);
    await inTransaction(ctx, (trx) =>
      createRecord(ctx, trx, caller, 'projects', {
        title: PROJECT_TITLES[i % PROJECT_TITLES.length]!,
        client: COMPANIES[(i * 5) % COMPANIES.length]!,
        priority: ['low', 'medium', 'high'][i % 3]!,
        budget: 5000 + i * 1500,
        due_on: addDays(today, i * 6 - 20),
        stage: PROJECTS.stages[i % 3]!.key,
      }),
    );
  }
}

const CHUNK = 1_000;

/**
 * `n` accounts, `n` deals and `n` records of a Projects object for the timing script, bulk-inserted (contacts
 * encrypted like any other, records indexed for search) to reach volume quickly; no events.
 */
export async function seedCrmVolume(ctx: AppContext, demo: Demo, n: number): Promise<void> {
  const db = ctx.database.db;
  const now = () => ctx.clock.now().toISOString();
  for (let start = 0; start < n; start += CHUNK) {
    const count = Math.min(CHUNK, n - start);
    const accounts = Array.from({ length: count }, (_, k) => {
      const i = start + k;
      const id = newId(ctx.clock.now());
      const name = `${COMPANIES[i % COMPANIES.length]} ${Math.floor(i / COMPANIES.length)}`;
      const sealed = sealContacts(ctx, { table: 'accounts', rowId: id, organizationId: demo.orgId }, { email: `contact${i}@example.com`, phoneNumber: `+1206555${String(i % 10_000).padStart(4, '0')}` });
      return { id, organization_id: demo.orgId, name, domain: null, email_enc: sealed.emailEnc, email_bidx: sealed.emailBidx, phone_enc: sealed.phoneEnc, phone_bidx: sealed.phoneBidx, industry: INDUSTRIES[i % INDUSTRIES.length]!, website: null, owner_id: demo.reps[i % 2]!, created_at: now(), updated_at: now() };
    });
    const deals = accounts.map((a, k) => {
      const i = start + k;
      return { id: newId(ctx.clock.now()), organization_id: demo.orgId, name: `${DEALS[i % DEALS.length]} ${i}`, stage: DEFAULT_DEAL_STAGES[i % DEFAULT_DEAL_STAGES.length]!.key, amount: `${1000 + (i % 97) * 250}.00`, currency: 'EUR', account_id: a.id, lead_id: null, owner_id: demo.reps[i % 2]!, expected_close_date: null, created_at: now(), updated_at: now() };
    });
    await db.transaction().execute(async (trx) => {
      for (let k = 0; k < count; k += 200) {
        await trx.insertInto('accounts').values(accounts.slice(k, k + 200)).execute();
        await trx.insertInto('deals').values(deals.slice(k, k + 200)).execute();
      }
    });
  }
  const object = (await findObject(db, ctx.database.dialect, demo.orgId, 'projects'))!;
  for (let start = 0; start < n; start += CHUNK) {
    const records = Array.from({ length: Math.min(CHUNK, n - start) }, (_, k) => {
      const i = start + k;
      return buildNewRecord(ctx, object, { title: `${PROJECT_TITLES[i % PROJECT_TITLES.length]} ${i}`, priority: ['low', 'medium', 'high'][i % 3], budget: i, due_on: addDays('2026-01-01', i % 365), stage: PROJECTS.stages[i % 3]!.key }, ctx.clock.now());
    });
    await db.transaction().execute((trx) => insertRecords(trx, ctx.database.dialect, object, records));
  }
}
