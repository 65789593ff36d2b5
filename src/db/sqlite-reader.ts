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
/** How long a data_version read may serve later lookups when no request has started meanwhile (background work). */
const VERSION_REUSE_MS = 1;

export class SqliteReader {
  private seenVersion = 0;
  private seenAt = 0;
  private reusable = false;
  private readonly statements = new Map<string, { statement: SqliteDatabase.Statement; columns: string[] }>();
  private dataVersionStatement: SqliteDatabase.Statement;
  private cacheVersionStatement: SqliteDatabase.Statement | undefined;
  /** The data_version at which cacheVersion was last read. */
  private cacheVersionAt = -1;
  private cacheVersion = 0;
  private schemaVersionStatement: SqliteDatabase.Statement;
  /** The schema_version the cached statements' column names belong to. */
  private schemaVersion = -1;

  constructor(private readonly raw: SqliteDatabase.Database) {
    this.dataVersionStatement = raw.prepare('pragma data_version').pluck();
    this.schemaVersionStatement = raw.prepare('pragma schema_version').pluck();
  }

  /**
   * Rows come back from SQLite as arrays and become objects here: better-sqlite3's own row objects look up
   * every column name in V8's string table on every row, which cost more than SQLite's step.
   *
   * The column names are cached with the statement, and SQLite prepares a statement again by itself after
   * another connection changed the schema: a `select *` then answers other columns. A schema change is a
   * commit, so the request's first changeVersion() sees data_version move and compares schema_version,
   * dropping every cached statement when it moved; a change committed later, during the request, is caught
   * here when it changed the row's width.
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
    const { statement } = prepared;
    const rows = statement.all(parameters as unknown[]) as unknown[][];
    if (rows.length > 0 && rows[0]!.length !== prepared.columns.length) prepared.columns = statement.columns().map((c) => c.name);
    const columns = prepared.columns;
    return rows.map((values) => {
      const row: Record<string, unknown> = {};
      for (let i = 0; i < columns.length; i++) row[columns[i]!] = values[i];
      return row;
    });
  }

  /**
   * A number that moves whenever another connection (this process's writer, another thread's, a `crm` command,
   * hand-written SQL) has committed a change to what the caches hold: the `cache_version` row that migration
   * 0025's triggers move. Before that migration has run, SQLite's `data_version`, which moves on every commit.
   *
   * Reading it costs a little (a WAL read transaction begins and ends), and a request consults several caches
   * (the key, then the organization's custom fields): a value read since the last `forgetVersion()` and less
   * than a millisecond ago is reused. A request calls `forgetVersion()` as it starts (Database.requestStarted),
   * so every value it is given was read after it began: what another process committed before the request
   * arrived (a revocation) is seen, as with a read per lookup. This process's own commits call it too (the
   * group commit, Database.changesSeen).
   */
  changeVersion(): number {
    const now = performance.now();
    if (this.reusable && now - this.seenAt < VERSION_REUSE_MS) return this.seenVersion;
    this.seenVersion = retryOnSchemaChange(() => this.readVersion(), () => this.forgetStatements());
    this.seenAt = now;
    this.reusable = true;
    return this.seenVersion;
  }

  /**
   * `data_version` (a pragma, cheaper than a SELECT) says whether anyone has committed since the row was last
   * read; only then is `cache_version` read again. A stream of reads costs one pragma a request. Read in that
   * order, a commit landing between the two moves data_version past the one recorded, and the next call reads
   * the row again.
   */
  private readVersion(): number {
    const dataVersion = this.dataVersionStatement.get() as number;
    if (dataVersion === this.cacheVersionAt) return this.cacheVersion;
    const schemaVersion = this.schemaVersionStatement.get() as number;
    if (schemaVersion !== this.schemaVersion) {
      this.statements.clear();
      this.schemaVersion = schemaVersion;
    }
    if (this.cacheVersionStatement === undefined) {
      const migrated = this.raw.prepare("select 1 from sqlite_master where type = 'table' and name = 'cache_version'").get() !== undefined;
      if (!migrated) return dataVersion;
      this.cacheVersionStatement = this.raw.prepare('select version from cache_version where id = 1').pluck();
    }
    this.cacheVersion = this.cacheVersionStatement.get() as number;
    this.cacheVersionAt = dataVersion;
    return this.cacheVersion;
  }

  private forgetStatements(): void {
    this.dataVersionStatement = this.raw.prepare('pragma data_version').pluck();
    this.schemaVersionStatement = this.raw.prepare('pragma schema_version').pluck();
    this.cacheVersionStatement = undefined;
    this.cacheVersionAt = -1;
  }

  /** The next changeVersion() reads SQLite again (a request starts; this process committed a change caches hold). */
  forgetVersion(): void {
    this.reusable = false;
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
