import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteReader } from '../../src/db/sqlite-reader.js';

/**
 * The read-only connection caches each statement's column names. SQLite prepares a statement again by itself
 * when another connection changed the schema, so a `select *` may come back with other columns than the ones
 * cached: the rows must carry the columns of the statement as it ran.
 */
describe('SqliteReader after another connection changed the schema', () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const open = () => {
    dir = mkdtempSync(join(tmpdir(), 'crm-reader-'));
    const file = join(dir, 'crm.db');
    const writer = new SqliteDatabase(file);
    writer.pragma('journal_mode = WAL');
    writer.exec(`create table t (id integer primary key, a text, b text); insert into t values (1, 'A', 'B')`);
    return { writer, reader: new SqliteReader(new SqliteDatabase(file, { readonly: true })) };
  };

  it('labels a column added since the statement was first run', () => {
    const { writer, reader } = open();
    expect(reader.all('select * from t where id = ?', [1])).toEqual([{ id: 1, a: 'A', b: 'B' }]);
    writer.exec(`alter table t add column c text; update t set c = 'C'`);
    expect(reader.all('select * from t where id = ?', [1])).toEqual([{ id: 1, a: 'A', b: 'B', c: 'C' }]);
    reader.close();
    writer.close();
  });

  it('labels the columns of a table rebuilt with as many columns in another order, from the next request on', () => {
    const { writer, reader } = open();
    reader.changeVersion();
    expect(reader.all('select * from t where id = ?', [1])).toEqual([{ id: 1, a: 'A', b: 'B' }]);
    writer.exec(`alter table t drop column a; alter table t add column z text; update t set z = 'Z'`);
    // What a request does as it starts (Database.requestStarted, then the key cache's lookup).
    reader.forgetVersion();
    reader.changeVersion();
    expect(reader.all('select * from t where id = ?', [1])).toEqual([{ id: 1, b: 'B', z: 'Z' }]);
    reader.close();
    writer.close();
  });
});
