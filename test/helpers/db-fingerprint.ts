import { sql } from 'kysely';
import type { TestApp } from './test-app.js';
import { dialect } from './test-app.js';

async function tablesOf(t: TestApp): Promise<{ name: string; hasUpdatedAt: boolean }[]> {
  const db = t.ctx.database.db;
  const rows =
    dialect === 'sqlite'
      ? (await sql<{ name: string; cols: string }>`select m.name, (select group_concat(p.name) from pragma_table_info(m.name) p) as cols
          from sqlite_master m where m.type = 'table' and m.name not like 'sqlite_%' and m.name not like '%_fts%'`.execute(db)).rows
      : (await sql<{ name: string; cols: string }>`select t.table_name as name, string_agg(c.column_name, ',') as cols
          from information_schema.tables t join information_schema.columns c on c.table_schema = t.table_schema and c.table_name = t.table_name
          where t.table_schema = ${t.location} and t.table_type = 'BASE TABLE' group by t.table_name`.execute(db)).rows;
  return rows.map((r) => ({ name: r.name, hasUpdatedAt: r.cols.split(',').includes('updated_at') })).sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * One query that sums up every table's state: its row count and, where rows carry updated_at, the latest
 * change. A rejected request must leave it exactly as it was (nothing half-written, nothing half-updated).
 */
export async function fingerprinter(t: TestApp): Promise<() => Promise<string>> {
  const tables = await tablesOf(t);
  const parts = tables.flatMap(({ name, hasUpdatedAt }) => [
    sql`(select count(*) from ${sql.table(name)})`,
    ...(hasUpdatedAt ? [sql`(select max(updated_at) from ${sql.table(name)})`] : []),
  ]);
  const query = sql<Record<string, unknown>>`select ${sql.join(parts.map((p, i) => sql`${p} as ${sql.ref(`c${i}`)}`))}`;
  return async () => JSON.stringify(Object.values((await query.execute(t.ctx.database.db)).rows[0]!));
}
