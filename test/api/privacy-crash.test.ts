import type { ChildProcess } from 'node:child_process';
import SqliteDatabase from 'better-sqlite3';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inTransaction } from '../../src/db/transaction.js';
import { prepareLeadsOf, storePreparedLeads } from '../../src/modules/leads/leads.service.js';
import { runBin, startBin } from '../helpers/cli.js';
import { databaseEnv } from '../helpers/processes.js';
import { eventually } from '../helpers/receiver.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { buildTestApp, dialect, type TestApp } from '../helpers/test-app.js';

/**
 * `crm erase` killed with SIGKILL while its transaction is open (seen from outside: on SQLite the write lock
 * is held, on PostgreSQL its backend has written): the 1,000 matching leads are either all there or all
 * gone, and the receipt exists exactly when they are gone.
 */
const EMAIL = 'crash.subject@privacy.example';
const ITEMS = 1_000;

let t: TestApp;
let org: Seeded;
let env: Record<string, string>;

const remaining = async () =>
  Number((await t.ctx.database.db.selectFrom('leads').select((eb) => eb.fn.countAll<number>().as('n')).where('organization_id', '=', org.orgId).executeTakeFirstOrThrow()).n);
const receipts = async () => (await t.ctx.database.db.selectFrom('privacy_erasures').select('id').where('organization_id', '=', org.orgId).execute()).length;

/** True while a writer transaction is open on the database (another process's). */
function writerProbe(): { busy(): Promise<boolean>; close(): void } {
  if (dialect === 'sqlite') {
    const raw = new SqliteDatabase(t.location);
    raw.pragma('busy_timeout = 0');
    return {
      busy: async () => {
        try {
          raw.exec('begin immediate; rollback');
          return false;
        } catch {
          return true;
        }
      },
      close: () => raw.close(),
    };
  }
  return {
    busy: async () => {
      const { rows } = await sql<{ n: number }>`select count(*) as n from pg_stat_activity where backend_xid is not null and pid <> pg_backend_pid() and query ilike '%leads%'`.execute(t.ctx.database.db);
      return Number(rows[0]!.n) > 0;
    },
    close: () => undefined,
  };
}

beforeAll(async () => {
  t = await buildTestApp();
  org = await seedOrg(t.ctx);
  env = databaseEnv(t);
  const caller = { organizationId: org.orgId, actor: { type: 'SYSTEM' as const, id: 'test', channel: 'API' as const } };
  const inputs = Array.from({ length: ITEMS }, (_, i) => ({ name: `Crash Subject ${i}`, email: EMAIL }));
  const prepared = await prepareLeadsOf(t.ctx, t.ctx.database.db, org.orgId, inputs);
  await inTransaction(t.ctx, (trx) => storePreparedLeads(trx, caller, prepared));
  expect(await remaining()).toBe(ITEMS);
}, 180_000);
afterAll(() => t.close());

describe('an erasure killed in the middle', () => {
  it(`leaves all ${ITEMS} matching items or none`, async () => {
    const probe = writerProbe();
    let child: ChildProcess | undefined;
    try {
      child = startBin(['erase', '--org', org.orgId, '--email', EMAIL, '--json'], env);
      const exited = new Promise((resolve) => child!.once('exit', resolve));
      // Polled as fast as the probe goes: the transaction lasts some tens of milliseconds.
      const caught = await eventually(async () => {
        if (await probe.busy()) return true;
        if (child!.exitCode !== null) return false;
        throw new Error('erasure transaction not open yet');
      }, 180_000, 0);
      child.kill('SIGKILL');
      await exited;
      expect(caught, 'the kill landed while the transaction was open').toBe(true);
    } finally {
      probe.close();
    }
    const left = await remaining();
    console.log(JSON.stringify({ dialect, leftAfterKill: left }));
    expect([0, ITEMS]).toContain(left);
    expect(await receipts()).toBe(left === 0 ? 1 : 0);
  }, 240_000);

  it('a retried erasure then removes whatever is left, in one go', async () => {
    const before = await remaining();
    const res = await runBin(['erase', '--org', org.orgId, '--email', EMAIL, '--json'], env);
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout).matched).toEqual({ leads: before, accounts: 0, deals: 0, records: 0 });
    expect(await remaining()).toBe(0);
  }, 180_000);
});
