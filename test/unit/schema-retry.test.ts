import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { retryingStatement } from '../../src/db/schema-retry.js';
import { SqliteReader } from '../../src/db/sqlite-reader.js';

/*
 * SQLite re-prepares a statement itself after another connection changed the schema, and reports SQLITE_SCHEMA
 * only when the schema keeps changing through all of its own retries (a stream of schema changes on a large
 * schema, issue 14), which a test can't reproduce on time. So the first run of a statement here fails with
 * the error SQLite gives then, while a second connection really alters the schema between prepare and run.
 */
const schemaChanged = () => new SqliteDatabase.SqliteError('database schema has changed', 'SQLITE_SCHEMA');

let dir: string;
let raw: SqliteDatabase.Database;
let other: SqliteDatabase.Database;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'crm-schema-retry-'));
  raw = new SqliteDatabase(join(dir, 'crm.db'));
  raw.pragma('journal_mode = WAL');
  raw.exec(`create table t (id integer primary key, name text); insert into t (name) values ('one')`);
  other = new SqliteDatabase(join(dir, 'crm.db'));
});
afterEach(() => {
  raw.close();
  other.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * A prepare whose statements' `method` fail with SQLITE_SCHEMA for the first `failures` runs in all, each
 * time after `changeSchema` (the other connection's change under the prepared statement).
 */
function failingPrepare(db: SqliteDatabase.Database, method: 'all' | 'run', failures: number, changeSchema: () => void = () => undefined) {
  const calls = { prepares: 0, failed: 0 };
  const prepare = (sqlText: string) => {
    calls.prepares += 1;
    const statement = db.prepare(sqlText);
    const real = statement[method].bind(statement) as (...a: unknown[]) => unknown;
    Object.defineProperty(statement, method, {
      value: (...args: unknown[]) => {
        if (calls.failed < failures) {
          calls.failed += 1;
          changeSchema();
          throw schemaChanged();
        }
        return real(...args);
      },
    });
    return statement;
  };
  return { prepare, calls };
}

describe('SQLITE_SCHEMA on the writer connection (Kysely driver statements)', () => {
  it('runs a read again on a fresh prepare, which sees the schema the other connection changed', () => {
    const { prepare, calls } = failingPrepare(raw, 'all', 1, () => other.exec('alter table t add column note text'));
    const statement = retryingStatement(() => prepare('select * from t'));
    expect(statement.all()).toEqual([{ id: 1, name: 'one', note: null }]);
    expect(calls).toEqual({ prepares: 2, failed: 1 });
  });

  it('runs a write again, once', () => {
    let tables = 0;
    const { prepare, calls } = failingPrepare(raw, 'run', 2, () => other.exec(`create table u${++tables} (x)`));
    const statement = retryingStatement(() => prepare('insert into t (name) values (?)'));
    expect(statement.run('two').changes).toBe(1);
    expect(raw.prepare('select name from t order by id').pluck().all()).toEqual(['one', 'two']);
    expect(calls.prepares).toBe(3);
  });

  it('gives up after a few attempts, and never retries other errors', () => {
    const endless = failingPrepare(raw, 'all', Infinity);
    expect(() => retryingStatement(() => endless.prepare('select * from t')).all()).toThrow('database schema has changed');
    expect(endless.calls.failed).toBe(4);
    raw.exec('create unique index t_name on t (name)');
    let prepares = 0;
    const insert = retryingStatement(() => (prepares++, raw.prepare('insert into t (name) values (?)')));
    expect(() => insert.run('one')).toThrow(/UNIQUE/);
    expect(prepares).toBe(1);
  });
});

describe('SQLITE_SCHEMA on the read connection (authentication, fetch by id)', () => {
  it('answers with a statement prepared again instead of failing', () => {
    const { prepare, calls } = failingPrepare(raw, 'all', 1, () => other.exec('alter table t add column note text'));
    const reader = new SqliteReader(new Proxy(raw, { get: (target, prop) => (prop === 'prepare' ? prepare : Reflect.get(target, prop, target)) }));
    expect(reader.all('select id, name from t where id = ?', [1])).toEqual([{ id: 1, name: 'one' }]);
    expect(reader.all('select id, name from t where id = ?', [1])).toEqual([{ id: 1, name: 'one' }]);
    expect(calls.failed).toBe(1);
  });
});
