import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import pg from 'pg';
import {
  CompiledQuery,
  Kysely,
  PostgresDialect,
  SqliteDialect,
  type DatabaseConnection,
  type Driver,
  type Transaction,
} from 'kysely';
import type { Dialect } from '../config.js';
import type { DB } from './schema.js';
import { FifoMap } from '../lib/fifo-map.js';
import { GroupCommit } from './group-commit.js';
import { retryingStatement } from './schema-retry.js';
import { openReader } from './sqlite-reader.js';
import { registerWalBuffer } from './wal-buffer.js';
import { WalCheckpointer } from './wal-checkpointer.js';
import { ChangeFeed } from './change-feed.js';
import { useNamedStatements } from './named-statements.js';
import { deferBegin } from './deferred-begin.js';
import { WriteLock } from './write-lock.js';
import { KEY_LOOKUP_CHANNEL } from './migrations/0013_key_lookup_notify.js';

export type Db = Kysely<DB>;
/** What stores accept: the database or an open transaction, so a route's transaction passes straight through. */
export type Executor = Kysely<DB> | Transaction<DB>;

export interface Database {
  readonly db: Db;
  readonly dialect: Dialect;
  /** PostgreSQL only: the schema first on the search_path when one was given (see OpenOptions.schema). */
  readonly schema?: string;
  /**
   * Runs `fn` in a transaction. On SQLite, transactions requested together share one commit (see
   * GroupCommit); on PostgreSQL each is its own transaction on a pooled connection.
   */
  transaction<T>(fn: (trx: Transaction<DB>) => Promise<T>): Promise<T>;
  /**
   * A number that changes whenever what authentication reads for a key may have changed, in any process:
   * on SQLite the `cache_version` row the key and definition tables' triggers move (migration 0025), read at
   * most once per request; on PostgreSQL, notifications of the same tables' triggers (db/change-feed.ts). Absent behind a transaction-mode pooler, where LISTEN can't work: nothing is cached.
   */
  changeCounter?(): number;
  /**
   * Resolves once this instance's caches will see its earlier commits (a revocation, a definition change): on
   * PostgreSQL once every listening instance has seen them; on SQLite at once (the next counter read is fresh).
   */
  changesSeen?(): Promise<void>;
  /** SQLite: a request starts; the change counter is read afresh for it (see SqliteReader.changeVersion). */
  requestStarted?(): void;
  /**
   * SQLite: whether transactions of this thread are running or waiting for their commit, i.e. whether this
   * thread has database work to do besides the caller's (a batch's new leads then have their contacts sealed
   * on a worker).
   */
  writesPending?(): boolean;
  close(): Promise<void>;
}

export interface OpenOptions {
  dialect: Dialect;
  url: string;
  /** PostgreSQL only: a schema placed first on the search_path (tests use one per file). */
  schema?: string;
  poolSize?: number;
  /** PostgreSQL only: how long a query may wait for a connection (made, or free in the pool) before it fails. */
  connectTimeoutMs?: number;
  /** SQLite only: shared by the threads of one server process that write to the same file (HTTP_THREADS). */
  writeLock?: WriteLock;
  /**
   * PostgreSQL only: the URL is a pooler in transaction mode (PgBouncer pool_mode=transaction), where
   * consecutive statements may run on different server connections: no named prepared statements and no
   * LISTEN (so no key lookup cache).
   */
  transactionPooler?: boolean;
}

/**
 * better-sqlite3 prepares a statement per call through Kysely; a small cache of prepared statements removes
 * that cost from every request (the SQL text of Kysely queries is stable, parameters are bound separately).
 * Each cached entry retries its runs on SQLITE_SCHEMA with a fresh prepare (schema-retry.ts).
 */
function withStatementCache(raw: SqliteDatabase.Database, size = 500): SqliteDatabase.Database {
  const cache = new FifoMap<string, ReturnType<typeof retryingStatement>>(size);
  const prepare = (sql: string) => {
    let stmt = cache.get(sql);
    if (stmt === undefined) {
      stmt = retryingStatement(() => raw.prepare(sql));
      cache.set(sql, stmt);
    }
    return stmt;
  };
  return new Proxy(raw, {
    get(target, prop, receiver) {
      if (prop === 'prepare') return prepare;
      const value = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * SQLite transactions start IMMEDIATE: the write lock is taken up front, so a read-then-write transaction
 * can't fail with SQLITE_BUSY when another process (the CLI, a worker) writes at the same time; it waits
 * for busy_timeout instead.
 */
class ImmediateSqliteDialect extends SqliteDialect {
  override createDriver(): Driver {
    const driver = super.createDriver();
    driver.beginTransaction = async (connection: DatabaseConnection) => {
      await connection.executeQuery(CompiledQuery.raw('begin immediate'));
    };
    return driver;
  }
}

/**
 * WAL pages at which a commit runs SQLite's automatic checkpoint: 160 MB, a bound only. The background
 * checkpointer (wal-checkpointer.ts) copies the WAL every 8 MB and, once it holds 32 MB, copies the rest under the
 * writers' lock so that the next commit rewinds it; an automatic checkpoint inside a commit copies thousands of
 * pages and syncs twice while every writer waits (22–40 ms every ~3,300 new leads at 10,000 pages: 15 % of the
 * write lock's time in `POST /leads/batch`, docs/performance.md). The same on every connection (the API's and
 * `crm import`'s): without a background checkpointer (a process that never wrote 8 MB) the bound is the only
 * checkpoint, and each copies a page rewritten by many commits once.
 */
const WAL_AUTOCHECKPOINT_PAGES = 40_000;
export const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;

export function openSqlite(file: string): SqliteDatabase.Database {
  if (file !== ':memory:') {
    mkdirSync(dirname(file), { recursive: true });
    registerWalBuffer();
  }
  const raw = new SqliteDatabase(file);
  raw.pragma('journal_mode = WAL');
  raw.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
  // A WAL grown past this under a burst (up to the 160 MB bound above) is cut back to it when it rewinds, instead
  // of keeping its high-water mark on disk for good.
  raw.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  raw.pragma('synchronous = NORMAL');
  raw.pragma('foreign_keys = ON');
  raw.pragma('busy_timeout = 5000');
  raw.pragma('cache_size = -65536');
  raw.pragma('temp_store = MEMORY');
  // Deleted content is overwritten with zeros, not left in free pages and cells (erasure, docs/privacy.md).
  raw.pragma('secure_delete = ON');
  return raw;
}

/**
 * A query waits at most this long for a PostgreSQL connection, new or free in the pool, then fails as the database
 * being unreachable (503 with Retry-After): node-pg's default is to wait for ever, so a server that stops answering
 * without refusing (a network partition, a host gone) or a pool busy for that long held every request open.
 */
const CONNECT_TIMEOUT_MS = 10_000;

export function openDatabase(opts: OpenOptions): Database {
  if (opts.dialect === 'sqlite') {
    const raw = openSqlite(opts.url);
    const db = new Kysely<DB>({ dialect: new ImmediateSqliteDialect({ database: withStatementCache(raw) }) });
    const reader = opts.url === ':memory:' ? undefined : openReader(db, opts.url);
    // A file's WAL is copied by a worker thread once enough of it waits (wal-checkpointer.ts), which takes the
    // writers' lock to let the WAL rewind: a process of one HTTP thread has one too.
    const lock = opts.url === ':memory:' ? opts.writeLock : (opts.writeLock ?? new WriteLock());
    const checkpoints = opts.url === ':memory:' ? undefined : new WalCheckpointer(opts.url, { lock });
    const group = new GroupCommit(db, {
      lock,
      afterCommit: () => {
        // What this process commits is seen by the next counter read, even within the request that committed it.
        reader?.forgetVersion();
        checkpoints?.committed();
      },
    });
    return {
      db,
      dialect: 'sqlite',
      transaction: (fn) => group.run(fn),
      writesPending: () => group.pending,
      ...(reader
        ? {
            changeCounter: () => reader.changeVersion(),
            changesSeen: async () => reader.forgetVersion(),
            requestStarted: () => reader.forgetVersion(),
          }
        : {}),
      close: async () => {
        await checkpoints?.close();
        reader?.close();
        await db.destroy();
      },
    };
  }
  // Numeric columns (bigint counts, sums) come back as strings by default; counts fit in a JS number.
  pg.types.setTypeParser(pg.types.builtins.INT8, (v: string) => Number(v));
  const connection = {
    connectionString: opts.url,
    connectionTimeoutMillis: opts.connectTimeoutMs ?? CONNECT_TIMEOUT_MS,
    ...(opts.schema ? { options: `-c search_path=${opts.schema},public` } : {}),
  };
  const pool = new pg.Pool({ ...connection, max: opts.poolSize ?? 10 });
  // An idle client whose connection drops (a PostgreSQL restart, a failover, a pooler going away) reports it here;
  // the pool has already discarded it and connects anew on demand. Without a listener node-pg's 'error' event
  // ends the process. A query in flight fails on its own (503, isDatabaseUnreachable).
  pool.on('error', () => undefined);
  // A client handed out (in a query or a transaction) has no pool listener: pg-pool removes it until the release.
  // If its connection drops then, node-pg fails the query in flight (which the caller sees) and also emits 'error',
  // which would end the process. Heard here; the release then discards the client (no longer queryable).
  pool.on('connect', (client) => client.on('error', () => undefined));
  if (!opts.transactionPooler) pool.on('connect', useNamedStatements);
  // After the named statements: the `begin` it holds back goes in front of a statement's text, named or not.
  pool.on('connect', deferBegin);
  const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) });
  const feed = opts.transactionPooler
    ? undefined
    : new ChangeFeed(() => new pg.Client(connection), (payload) => pool.query('select pg_notify($1, $2)', [KEY_LOOKUP_CHANNEL, payload]));
  if (feed) pool.on('connect', (client) => feed.watch(client));
  return {
    db,
    dialect: 'postgres',
    ...(opts.schema ? { schema: opts.schema } : {}),
    transaction: (fn) => db.transaction().execute(fn),
    ...(feed ? { changeCounter: () => feed.version(), changesSeen: () => feed.sync() } : {}),
    close: async () => {
      await feed?.close();
      await db.destroy();
    },
  };
}

/** SQLSTATE class 08 (connection exception) and 57P01–57P03 (the server shutting down or starting). */
const UNREACHABLE_STATES = /^(08|57P0[123])/;
const UNREACHABLE_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTFOUND']);

/** True when the database could not be reached or dropped the connection: the request may be retried later. */
export function isDatabaseUnreachable(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  if (typeof e?.code === 'string' && (UNREACHABLE_ERRNOS.has(e.code) || UNREACHABLE_STATES.test(e.code))) return true;
  // node-pg's own messages for a connection that ended or could not be made in time.
  return typeof e?.message === 'string' && /^(Connection terminated|Client has encountered a connection error|timeout exceeded when trying to connect)/.test(e.message);
}

/**
 * A failure as told to the person starting the server or a `crm` command: when the database could not be reached,
 * it names the setting to check (never its value, which may hold a password).
 */
export function describeFailure(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return isDatabaseUnreachable(err) ? `the database (DATABASE_URL) is not reachable: ${message}` : message;
}

/**
 * True when the database refused the work for want of a resource, not because of the request: SQLite's disk (or
 * `max_page_count`) full, PostgreSQL's class 53 (disk full, out of memory, too many connections). Nothing was
 * written; the same request may succeed once an operator has made room.
 */
export function isDatabaseOutOfResources(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'SQLITE_FULL' || (typeof code === 'string' && /^53[0-9A-Z]{3}$/.test(code));
}

/**
 * True when another writer was in the way: it kept the database locked past the wait (SQLite's busy_timeout: another
 * process's long transaction, an `--all-or-nothing` import, a restore; PostgreSQL's lock_timeout, 55P03), or
 * PostgreSQL rolled this transaction back to resolve a deadlock or a serialization conflict with it (40P01, 40001).
 * Nothing was written, and the same request succeeds once that writer is done.
 */
export function isDatabaseBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (BUSY_STATES.has(code) || /^SQLITE_(BUSY|LOCKED)(_|$)/.test(code));
}
const BUSY_STATES = new Set(['55P03', '40P01', '40001']);

/** True when a unique constraint rejected the write (both dialects). */
export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  return e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_UNIQUE' || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
