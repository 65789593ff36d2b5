import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENCRYPTED_COLUMNS } from '../../src/modules/shared/encrypted-columns.js';
import { keyIdOf } from '../../src/crypto/field-cipher.js';
import { reencryptColumns } from '../../src/crypto/reencrypt.js';
import { buildTestApp, dialect, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';
import { runCli } from '../helpers/cli.js';
import { rowsText } from '../helpers/database-text.js';
import { runScenario, type Scenario } from '../helpers/scenario.js';

/**
 * Rotation as an operator does it: every instance restarts with the new key first and the old one retired
 * (both decrypt), `crm reencrypt` re-seals everything while the service keeps writing, then instances
 * restart with the new key alone.
 */
const K2 = randomBytes(32).toString('base64');

describe('encryption key rotation, end to end', () => {
  let k1: TestApp;
  let s: Seeded;
  let before: Scenario;
  let k1Id: string;
  /** Handed out under K1 alone: a list walk and a feed reader hold them across the rotation. */
  let listCursor: string;
  let feedCursor: string;

  /** A restarted instance on the same database with other keys. */
  const restart = (env: Record<string, string>) => buildTestApp({ sameDatabaseAs: k1, env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', ...env } });
  const cliEnv = (keys: { ENCRYPTION_KEY: string; ENCRYPTION_KEYS_RETIRED?: string }) => ({
    ...keys,
    DATABASE_URL: dialect === 'postgres' ? `${k1.config.database.url}?options=${encodeURIComponent(`-c search_path=${k1.location},public`)}` : k1.location,
  });

  async function expectReadable(t: TestApp, scenario: Scenario) {
    for (const lead of scenario.leads) {
      const res = await call(t.app, 'GET', `/leads/${lead.id}`, { auth: s.auth });
      expect(res.body.data.lead).toMatchObject({ email: lead.email, phoneNumber: lead.phone });
      const byEmail = await call(t.app, 'GET', `/leads?q=${encodeURIComponent(lead.email)}`, { auth: s.auth });
      expect(byEmail.body.data.leads.map((l: { id: string }) => l.id)).toContain(lead.id);
      const byPhone = await call(t.app, 'GET', `/leads?q=${encodeURIComponent(lead.phone)}`, { auth: s.auth });
      expect(byPhone.body.data.leads.map((l: { id: string }) => l.id)).toContain(lead.id);
    }
    for (const account of scenario.accounts) {
      expect((await call(t.app, 'GET', `/accounts/${account.id}`, { auth: s.auth })).body.data.account).toMatchObject({ email: account.email, phoneNumber: account.phone });
      const byEmail = await call(t.app, 'GET', `/accounts?q=${encodeURIComponent(account.email)}`, { auth: s.auth });
      expect(byEmail.body.data.accounts.map((a: { id: string }) => a.id)).toEqual([account.id]);
    }
    for (const record of scenario.records) {
      const res = await call(t.app, 'GET', `/objects/${record.object}/records/${record.id}`, { auth: s.auth });
      expect(res.body.data.record).toMatchObject({ guest_email: record.email, guest_phone: record.phone });
    }
    const replay = await call(t.app, 'POST', '/leads', { auth: s.auth, body: scenario.idempotent.body, headers: { 'idempotency-key': scenario.idempotent.key } });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.data.lead.id).toBe(scenario.idempotent.leadId);
  }

  beforeAll(async () => {
    k1 = await buildTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
    k1Id = keyIdOf(Buffer.from(k1.config.encryptionKeys[0]!, 'base64'));
    s = await seedOrg(k1.ctx, { rateLimitPerMinute: 1_000_000 });
    before = await runScenario(k1.app, s, 'k1');
    listCursor = (await call(k1.app, 'GET', '/leads?limit=1', { auth: s.auth })).body.data.pagination.nextCursor;
    feedCursor = (await call(k1.app, 'GET', '/events?limit=1', { auth: s.auth })).body.data.nextCursor;
  });
  afterAll(() => k1.close());

  it('rotates: old rows readable under the new key, re-encrypted in the background, old key retired', async () => {
    // 1. Restart with K2 current and K1 retired: everything written under K1 still reads and searches.
    const both = await restart({ ENCRYPTION_KEY: K2, ENCRYPTION_KEYS_RETIRED: k1.config.encryptionKeys[0]! });
    let during: Scenario;
    try {
      await expectReadable(both, before);
      during = await runScenario(both.app, s, 'k2');
      const dry = await reencryptColumns(both.ctx.database.db, both.ctx.cipher, ENCRYPTED_COLUMNS, { dryRun: true });
      const stale = Object.fromEntries(dry.map((r) => [r.column, r.stale]));
      // The idempotent lead create and the idempotent secret rotation each stored a sealed response.
      expect(stale).toMatchObject({ 'system_secrets.value_enc': 1, 'leads.email_enc': expect.any(Number), 'idempotency_keys.response_body': 2 });
      expect(stale['leads.email_enc']).toBeGreaterThanOrEqual(4);
      expect(stale['users.email_enc']).toBeGreaterThanOrEqual(1);
      expect(stale['records.data']).toBe(4);
      expect(stale['webhook_endpoints.secret_enc']).toBe(1);
      expect(stale['webhook_endpoints.previous_secret_enc']).toBe(1);

      // 2. crm reencrypt, in small batches, while the service keeps writing.
      let writing = true;
      let writes = 0;
      const load = (async () => {
        while (writing) {
          const res = await call(both.app, 'POST', '/leads', { auth: s.auth, body: { name: `During ${writes}`, email: `during${writes}@example.com` } });
          expect(res.status).toBe(201);
          writes += 1;
        }
      })();
      const cli = await runCli(['--json', 'reencrypt', '--batch-size', '2'], cliEnv({ ENCRYPTION_KEY: K2, ENCRYPTION_KEYS_RETIRED: k1.config.encryptionKeys[0]! }));
      writing = false;
      await load;
      expect(cli.code, cli.stderr).toBe(0);
      const report = JSON.parse(cli.stdout) as { columns: { column: string; stale: number; rewritten: number; failed: number }[]; failed: number };
      expect(report.failed).toBe(0);
      for (const c of report.columns) expect(c.rewritten, c.column).toBe(c.stale);
      expect(writes).toBeGreaterThan(0);

      // 3. Idempotent: nothing is left to do, and no row of any table holds a value sealed with K1 any more
      //    (so no encrypted column is missing from the registry). Freed pages may still hold old ciphertext
      //    until VACUUM: see docs/operations.md.
      const again = await reencryptColumns(both.ctx.database.db, both.ctx.cipher, ENCRYPTED_COLUMNS);
      expect(again.every((r) => r.stale === 0 && r.rewritten === 0)).toBe(true);
      const rows = await rowsText(both);
      expect(rows).toContain(`v1.${both.ctx.cipher.currentKeyId}.`);
      expect(rows).not.toContain(`v1.${k1Id}.`);
    } finally {
      await both.close();
    }

    // 4. Restart with K2 alone: everything, old and new, reads and searches.
    const k2Only = await restart({ ENCRYPTION_KEY: K2 });
    try {
      await expectReadable(k2Only, before);
      await expectReadable(k2Only, during!);
      // Cursors are sealed under a key derived from the blind-index key, which no rotation changes.
      expect((await call(k2Only.app, 'GET', `/leads?limit=1&after=${listCursor}`, { auth: s.auth })).status).toBe(200);
      expect((await call(k2Only.app, 'GET', `/events?limit=1&after=${feedCursor}`, { auth: s.auth })).status).toBe(200);
      for (const c of ENCRYPTED_COLUMNS) {
        const rows = await sql<Record<string, unknown>>`select * from ${sql.table(c.table)} where ${sql.ref(c.column)} is not null`.execute(k2Only.ctx.database.db);
        const sealed = c.sealedProperties ? await c.sealedProperties(k2Only.ctx.database.db, rows.rows) : null;
        for (const row of rows.rows) {
          const values: [string, string][] = sealed
            ? sealed(row).flatMap((p) => {
                const v = (JSON.parse(String(row[c.column])) as Record<string, unknown>)[p];
                return typeof v === 'string' ? [[v, c.aad(row, p)] as [string, string]] : [];
              })
            : [[String(row[c.column]), c.aad(row)]];
          for (const [value, aad] of values) expect(() => k2Only.ctx.cipher.decrypt(value, aad), c.column).not.toThrow();
        }
      }
    } finally {
      await k2Only.close();
    }
  }, 120_000);

  it('a value no configured key can open is reported, left alone, and fails the command', async () => {
    const stranger = await restart({ ENCRYPTION_KEY: randomBytes(32).toString('base64'), ENCRYPTION_KEYS_RETIRED: `${K2},${k1.config.encryptionKeys[0]!}` });
    try {
      const [lead] = before.leads;
      const [leadColumn] = ENCRYPTED_COLUMNS.filter((c) => c.table === 'leads' && c.column === 'email_enc');
      await sql`update leads set email_enc = ${`v1.00000000.${'A'.repeat(40)}`} where id = ${lead!.id}`.execute(stranger.ctx.database.db);
      const [report] = await reencryptColumns(stranger.ctx.database.db, stranger.ctx.cipher, [leadColumn!]);
      expect(report).toMatchObject({ failed: 1 });
      const left = await sql<{ email_enc: string }>`select email_enc from leads where id = ${lead!.id}`.execute(stranger.ctx.database.db);
      expect(left.rows[0]!.email_enc).toBe(`v1.00000000.${'A'.repeat(40)}`);
      const cli = await runCli(['--json', 'reencrypt'], cliEnv({ ENCRYPTION_KEY: stranger.config.encryptionKeys[0]!, ENCRYPTION_KEYS_RETIRED: `${K2},${k1.config.encryptionKeys[0]!}` }));
      expect(cli.code).toBe(1);
      expect(JSON.parse(cli.stdout).failed).toBe(1);
    } finally {
      await stranger.close();
    }
  }, 120_000);
});
