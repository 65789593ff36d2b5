import { sql, type QueryResult, type RawBuilder } from 'kysely';
import type { Db, Executor } from '../db/database.js';
import type { EncryptedColumn } from './encrypted-column.js';
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
  onBatch?(report: ColumnReport): void;
}

type Row = Record<string, unknown>;

/** Rows whose value is sealed with another key: every ciphertext starts `v1.<keyId>.` (see field-cipher.ts). */
function staleCondition(c: EncryptedColumn, cipher: FieldCipher): RawBuilder<unknown> {
  const conditions = [
    sql`${sql.ref(c.column)} is not null`,
    sql`${sql.ref(c.column)} not like ${`v1.${cipher.currentKeyId}.%`}`,
    ...Object.entries(c.where ?? {}).map(([k, v]) => sql`${sql.ref(k)} = ${v}`),
  ];
  return sql.join(conditions, sql` and `);
}

const keyTuple = (c: EncryptedColumn) => sql`(${sql.join(c.key.map((k) => sql.ref(k)))})`;
const valueTuple = (values: unknown[]) => sql`(${sql.join(values.map((v) => sql`${v}`))})`;

async function countStale(db: Executor, c: EncryptedColumn, cipher: FieldCipher): Promise<number> {
  const row = await sql<{ n: number }>`select count(*) as n from ${sql.table(c.table)} where ${staleCondition(c, cipher)}`.execute(db);
  return Number(row.rows[0]?.n ?? 0);
}

/**
 * Re-seals one batch with the current key. Each update is conditional on the old ciphertext, so a value the
 * application changed meanwhile is left alone (it is already sealed with the current key).
 */
async function rewriteBatch(db: Db, c: EncryptedColumn, cipher: FieldCipher, rows: Row[], report: ColumnReport): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (const row of rows) {
      const old = String(row[c.column]);
      let fresh: string;
      try {
        fresh = cipher.encrypt(cipher.decrypt(old, c.aad(row)), c.aad(row));
      } catch (err) {
        if (!(err instanceof DecryptionError)) throw err;
        report.failed += 1;
        continue;
      }
      const keyMatch = sql.join(c.key.map((k) => sql`${sql.ref(k)} = ${row[k]}`), sql` and `);
      const result = await sql`update ${sql.table(c.table)} set ${sql.ref(c.column)} = ${fresh} where ${keyMatch} and ${sql.ref(c.column)} = ${old}`.execute(trx);
      report.rewritten += Number(result.numAffectedRows ?? 0n);
    }
  });
}

/**
 * Re-encrypts every registered column with the current key (the first of ENCRYPTION_KEY), in small
 * keyset-paged batches, each its own short transaction: safe while servers run. Idempotent: a second run
 * finds nothing stale. Once every report shows stale = failed = 0, retired keys can be dropped.
 */
export async function reencryptColumns(
  db: Db,
  cipher: FieldCipher,
  columns: readonly EncryptedColumn[],
  opts: ReencryptOptions = {},
): Promise<ColumnReport[]> {
  const batchSize = opts.batchSize ?? 500;
  const reports: ColumnReport[] = [];
  for (const c of columns) {
    const report: ColumnReport = { column: `${c.table}.${c.column}`, stale: await countStale(db, c, cipher), rewritten: 0, failed: 0 };
    reports.push(report);
    if (opts.dryRun || report.stale === 0) continue;
    let after: unknown[] | null = null;
    for (;;) {
      const page: RawBuilder<unknown> = after === null ? sql`` : sql`and ${keyTuple(c)} > ${valueTuple(after)}`;
      const rows: QueryResult<Row> = await sql<Row>`select ${sql.join([...c.key, c.column].map((k) => sql.ref(k)))} from ${sql.table(c.table)}
        where ${staleCondition(c, cipher)} ${page} order by ${sql.join(c.key.map((k) => sql.ref(k)))} limit ${batchSize}`.execute(db);
      if (rows.rows.length === 0) break;
      await rewriteBatch(db, c, cipher, rows.rows, report);
      const last: Row = rows.rows[rows.rows.length - 1]!;
      after = c.key.map((k) => last[k]);
      opts.onBatch?.(report);
      if (opts.pauseMs) await new Promise((r) => setTimeout(r, opts.pauseMs));
    }
  }
  return reports;
}
