import { sql, type QueryResult, type RawBuilder } from 'kysely';
import type { Db } from '../db/database.js';
import type { ColumnRow, EncryptedColumn } from './encrypted-column.js';
import { DecryptionError, type FieldCipher } from './field-cipher.js';

export interface ColumnReport {
  column: string;
  /** Values found sealed with another key than the current one. */
  stale: number;
  rewritten: number;
  /** Values no key of the ring can open (wrong AAD or an unknown key): left as they are, reported. */
  failed: number;
}

export interface ReencryptOptions {
  batchSize?: number;
  /** Pause between batches, to leave the database to live traffic. */
  pauseMs?: number;
  /** Count stale values only. */
  dryRun?: boolean;
}

/**
 * Rows that may hold a value sealed with another key. Every ciphertext starts `v1.<keyId>.` (field-cipher.ts):
 * a plain column is stale when it does not start with the current key's prefix; a JSON column when, with
 * the current key's markers taken out, a marker is still left (its sealed properties are then checked).
 */
function candidates(c: EncryptedColumn, cipher: FieldCipher): RawBuilder<unknown> {
  const col = sql.ref(c.column);
  const stale = c.sealedProperties
    ? sql`replace(${col}, ${`"v1.${cipher.currentKeyId}.`}, '') like '%"v1.%'`
    : sql`${col} not like ${`v1.${cipher.currentKeyId}.%`}`;
  const filters = Object.entries(c.where ?? {}).map(([k, v]) => sql`${sql.ref(k)} = ${v}`);
  return sql.join([sql`${col} is not null`, stale, ...filters], sql` and `);
}

const refs = (names: readonly string[]) => sql.join(names.map((n) => sql.ref(n)));

/**
 * The row's column with every stale sealed value re-sealed under the current key, and how many were;
 * null when none could be. Stale and failed values are counted into `report`.
 */
function resealed(c: EncryptedColumn, cipher: FieldCipher, row: ColumnRow, properties: readonly string[] | null, report: ColumnReport): { text: string; values: number } | null {
  const reseal = (value: string, aad: string): string | null => {
    report.stale += 1;
    try {
      return cipher.encrypt(cipher.decrypt(value, aad), aad);
    } catch (err) {
      if (!(err instanceof DecryptionError)) throw err;
      report.failed += 1;
      return null;
    }
  };
  const old = String(row[c.column]);
  if (properties === null) {
    const text = reseal(old, c.aad(row));
    return text === null ? null : { text, values: 1 };
  }
  const doc = JSON.parse(old) as Record<string, unknown>;
  let values = 0;
  for (const property of properties) {
    const value = doc[property];
    if (typeof value !== 'string' || !cipher.isStale(value)) continue;
    const fresh = reseal(value, c.aad(row, property));
    if (fresh !== null) {
      doc[property] = fresh;
      values += 1;
    }
  }
  return values === 0 ? null : { text: JSON.stringify(doc), values };
}

/**
 * Re-seals one batch with the current key, in one short transaction. Each update is conditional on the old
 * column value, so a row the application changed meanwhile is left alone (its new values are current).
 */
async function rewriteBatch(db: Db, c: EncryptedColumn, cipher: FieldCipher, rows: ColumnRow[], report: ColumnReport, dryRun: boolean): Promise<void> {
  const propertiesOf = c.sealedProperties ? await c.sealedProperties(db, rows) : null;
  const updates = rows.flatMap((row) => {
    const fresh = resealed(c, cipher, row, propertiesOf ? propertiesOf(row) : null, report);
    return fresh === null ? [] : [{ row, fresh }];
  });
  if (dryRun || updates.length === 0) return;
  await db.transaction().execute(async (trx) => {
    for (const { row, fresh } of updates) {
      const keyMatch = sql.join(c.key.map((k) => sql`${sql.ref(k)} = ${row[k]}`), sql` and `);
      const result = await sql`update ${sql.table(c.table)} set ${sql.ref(c.column)} = ${fresh.text}
        where ${keyMatch} and ${sql.ref(c.column)} = ${row[c.column]}`.execute(trx);
      if (Number(result.numAffectedRows ?? 0n) > 0) report.rewritten += fresh.values;
    }
  });
}

/**
 * Re-encrypts every registered column with the current key (the first of ENCRYPTION_KEY), in small
 * keyset-paged batches, each its own short transaction: safe while servers run. Idempotent: a second run
 * finds nothing stale. Once every report shows stale = failed = 0, retired keys can be dropped.
 */
export async function reencryptColumns(db: Db, cipher: FieldCipher, columns: readonly EncryptedColumn[], opts: ReencryptOptions = {}): Promise<ColumnReport[]> {
  const batchSize = opts.batchSize ?? 500;
  const reports: ColumnReport[] = [];
  for (const c of columns) {
    const report: ColumnReport = { column: `${c.table}.${c.column}`, stale: 0, rewritten: 0, failed: 0 };
    reports.push(report);
    const selected = [...new Set([...c.key, ...(c.with ?? []), c.column])];
    let after: unknown[] | null = null;
    for (;;) {
      const page: RawBuilder<unknown> = after === null ? sql`` : sql`and (${refs(c.key)}) > (${sql.join(after.map((v) => sql`${v}`))})`;
      const rows: QueryResult<ColumnRow> = await sql<ColumnRow>`select ${refs(selected)} from ${sql.table(c.table)}
        where ${candidates(c, cipher)} ${page} order by ${refs(c.key)} limit ${batchSize}`.execute(db);
      if (rows.rows.length === 0) break;
      await rewriteBatch(db, c, cipher, [...rows.rows], report, opts.dryRun ?? false);
      const last: ColumnRow = rows.rows[rows.rows.length - 1]!;
      after = c.key.map((k) => last[k]);
      if (opts.pauseMs) await new Promise((r) => setTimeout(r, opts.pauseMs));
    }
  }
  return reports;
}
