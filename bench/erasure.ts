/**
 * Erasure benchmark: one data subject holding 1,000 items (600 leads, 200 accounts, 200 custom-object records,
 * each created through its service with its events), among 20,000 other leads; the time of
 * `POST /privacy/erasures`' service (one transaction, then the WAL truncate on SQLite) is reported per run,
 * and the WAL truncate alone after the same amount of writing.
 *
 *   npm run bench -- --only erasure [--postgres URL]
 */
import { inTransaction } from '../src/db/transaction.js';
import { truncateWal } from '../src/db/wal.js';
import { createAccount } from '../src/modules/accounts/accounts.service.js';
import { createLead } from '../src/modules/leads/leads.service.js';
import { createObject } from '../src/modules/objects/objects.service.js';
import { createRecord } from '../src/modules/objects/records.service.js';
import { createOrganization } from '../src/modules/orgs/orgs.service.js';
import { eraseSubject } from '../src/modules/privacy/privacy.service.js';
import { fmt, openBench, timeIt } from './lib.js';
import type { Dialect } from '../src/config.js';
import type { AppContext } from '../src/context.js';

const ACTOR = { type: 'SYSTEM' as const, id: 'bench', channel: 'API' as const };
const EMAIL = 'subject@bench.example';

async function seedSubject(ctx: AppContext, organizationId: string, round: number): Promise<void> {
  const caller = { organizationId, actor: ACTOR };
  for (let batch = 0; batch < 10; batch++) {
    await inTransaction(ctx, async (trx) => {
      for (let i = 0; i < 60; i++) await createLead(ctx, trx, caller, { name: `Subject ${round}-${batch}-${i}`, email: EMAIL });
      for (let i = 0; i < 20; i++) await createAccount(ctx, trx, caller, { name: `Subject Account ${round}-${batch}-${i}`, email: EMAIL });
      for (let i = 0; i < 20; i++) await createRecord(ctx, trx, caller, 'patients', { title: `Subject record ${round}-${batch}-${i}`, contact: EMAIL });
    });
  }
}

export async function runErasureBench(opts: { dialect: Dialect; pgUrl?: string; runs?: number }): Promise<void> {
  const { ctx, drop } = await openBench('erasure', opts.dialect, opts.pgUrl);
  try {
    const org = await createOrganization(ctx, { name: 'Bench', timezone: 'UTC' });
    const caller = { organizationId: org.id, actor: ACTOR };
    const fields = [{ key: 'title', label: 'Title', type: 'text' as const }, { key: 'contact', label: 'Contact', type: 'email' as const }];
    await inTransaction(ctx, (trx) => createObject(ctx, trx, org.id, { slug: 'patients', name: 'Patients', fields }));
    for (let batch = 0; batch < 20; batch++) {
      await inTransaction(ctx, async (trx) => {
        for (let i = 0; i < 1000; i++) await createLead(ctx, trx, caller, { name: `Other ${batch}-${i}`, email: `other${batch}.${i}@bench.example` });
      });
    }
    const times: number[] = [];
    for (let round = 0; round < (opts.runs ?? 3); round++) {
      await seedSubject(ctx, org.id, round);
      let matched = 0;
      times.push(await timeIt(async () => {
        const erasure = await eraseSubject(ctx, caller, { email: EMAIL });
        matched = erasure.matched.leads + erasure.matched.accounts + erasure.matched.records;
      }));
      if (matched !== 1000) throw new Error(`erased ${matched} items, expected 1000`);
    }
    await seedSubject(ctx, org.id, 99);
    const wal = await timeIt(() => truncateWal(ctx.database));
    const sorted = [...times].sort((x, y) => x - y);
    console.log(`\n## Erasure of a subject with 1,000 items (${opts.dialect}, 20,000 other leads)\n`);
    console.log('| runs (ms) | median (ms) | WAL truncate alone after as much writing (ms) |\n|---|---|---|');
    console.log(`| ${times.map((t) => fmt(t, 0)).join(', ')} | ${fmt(sorted[Math.floor(sorted.length / 2)]!, 0)} | ${opts.dialect === 'sqlite' ? fmt(wal, 1) : 'n/a'} |`);
  } finally {
    await drop();
  }
}
