import SqliteDatabase from 'better-sqlite3';
import type { Kysely } from 'kysely';
import type { DB } from './schema.js';
import { retryOnSchemaChange } from './schema-retry.js';

/**
 * A second, read-only SQLite connection for the hot reads (authentication, fetch by id) made outside a
 * transaction. Through Kysely they queue on the one writer connection: behind an open group commit, and
 * through its connection mutex and promise chain, which cost more than SQLite answering (precompiled.ts).
 * In WAL mode this connection reads the last committed state without waiting for the writer, and never sees
 * a batch that has not committed yet; a commit is visible to its next statement (read-your-writes holds,
 * since a caller is answered only after the commit).
 */
export class SqliteReader {
  private readonly statements = new Map<string, { statement: SqliteDatabase.Statement; columns: string[] }>();
  private readonly versionStatement: SqliteDatabase.Statement;

  constructor(private readonly raw: SqliteDatabase.Database) {
    this.versionStatement = raw.prepare('pragma data_version').pluck();
  }

  /**
   * Rows come back from SQLite as arrays and become objects here: better-sqlite3's own row objects look up
   * every column name in V8's string table on every row, which cost more than SQLite's step.
   */
  all(sqlText: string, parameters: readonly unknown[]): Record<string, unknown>[] {
    return retryOnSchemaChange(() => this.run(sqlText, parameters), () => this.statements.delete(sqlText));
  }

  private run(sqlText: string, parameters: readonly unknown[]): Record<string, unknown>[] {
    let prepared = this.statements.get(sqlText);
    if (prepared === undefined) {
      const statement = this.raw.prepare(sqlText).raw(true);
      prepared = { statement, columns: statement.columns().map((c) => c.name) };
      this.statements.set(sqlText, prepared);
    }
    const { statement, columns } = prepared;
    return (statement.all(parameters as unknown[]) as unknown[][]).map((values) => {
      const row: Record<string, unknown> = {};
      for (let i = 0; i < columns.length; i++) row[columns[i]!] = values[i];
      return row;
    });
  }

  /**
   * SQLite's `data_version`: it changes whenever another connection (this process's writer, another thread's,
   * a `crm` command) has committed since the previous call, and only then. This connection never writes, so
   * every commit counts.
   */
  dataVersion(): number {
    return this.versionStatement.get() as number;
  }

  close(): void {
    this.raw.close();
  }
}

const readers = new WeakMap<Kysely<DB>, SqliteReader>();

export function openReader(db: Kysely<DB>, file: string): SqliteReader {
  const raw = new SqliteDatabase(file, { readonly: true });
  raw.pragma('busy_timeout = 5000');
  raw.pragma('cache_size = -65536');
  const reader = new SqliteReader(raw);
  readers.set(db, reader);
  return reader;
}

/** The reader of a SQLite database's root Kysely instance; none for a transaction or PostgreSQL. */
export function readerOf(db: object): SqliteReader | undefined {
  return readers.get(db as Kysely<DB>);
}
