import type SqliteDatabase from 'better-sqlite3';

/**
 * SQLite re-prepares a statement by itself when another connection changed the schema, but gives up with
 * SQLITE_SCHEMA ("database schema has changed") when the schema changes again during each of its own
 * retries: a stream of schema changes on a large schema (issue 14 saw it answer 500 in key authentication).
 * The statement has done nothing when that error comes (it precedes the first step), so running it again on
 * a fresh prepare is safe, for reads and writes alike.
 */
const ATTEMPTS = 4;

export const isSchemaChanged = (err: unknown): boolean => (err as { code?: unknown } | null)?.code === 'SQLITE_SCHEMA';

/** Runs `run`; after SQLITE_SCHEMA, calls `forget` (drop the cached statement) and runs it again, a few times. */
export function retryOnSchemaChange<T>(run: () => T, forget: () => void): T {
  for (let attempt = 1; ; attempt++) {
    try {
      return run();
    } catch (err) {
      if (!isSchemaChanged(err) || attempt >= ATTEMPTS) throw err;
      forget();
    }
  }
}

/** What Kysely's SQLite driver calls on a prepared statement. */
type DriverStatement = Pick<SqliteDatabase.Statement, 'reader' | 'all' | 'run' | 'iterate'>;

/**
 * A prepared statement for Kysely's driver whose runs are retried on SQLITE_SCHEMA with a statement prepared
 * afresh. `iterate` is not retried: the caller may already hold rows of it.
 */
export function retryingStatement(prepare: () => SqliteDatabase.Statement): DriverStatement {
  const prepareAgain = () => retryOnSchemaChange(prepare, () => undefined);
  let statement = prepareAgain();
  const replace = () => {
    statement = prepareAgain();
  };
  return {
    reader: statement.reader,
    all: (...params: unknown[]) => retryOnSchemaChange(() => statement.all(...params), replace),
    run: (...params: unknown[]) => retryOnSchemaChange(() => statement.run(...params), replace),
    iterate: (...params: unknown[]) => statement.iterate(...params),
  } as DriverStatement;
}
