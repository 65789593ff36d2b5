import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrateToLatest } from '../../src/db/migrate.js';
import { buildTestApp, dialect, type TestApp } from '../helpers/test-app.js';
import { seedOrg, type Seeded } from '../helpers/seed.js';
import { call } from '../helpers/http.js';

/*
 * SQLite only (issue 14): every connection re-parses the whole schema after any change to it, so the schema
 * must not grow with the number of objects. All objects' records share one search index (migration 0010).
 */
let t: TestApp;
let a: Seeded;

const FIELDS = [{ key: 'name', label: 'Name', type: 'text' }];
const STAGES = [{ key: 'open', label: 'Open' }, { key: 'won', label: 'Won' }];

const schemaEntries = async () => Number((await sql<{ n: number }>`select count(*) as n from sqlite_master`.execute(t.ctx.database.db)).rows[0]!.n);
const createObject = async (slug: string) => {
  const res = await call(t.app, 'POST', '/objects', { auth: a.auth, body: { slug, name: slug, fields: FIELDS, stages: STAGES } });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
};
const names = async (slug: string, qs: string) => {
  const res = await call(t.app, 'GET', `/objects/${slug}/records?${qs}`, { auth: a.auth });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { names: res.body.data.records.map((r: { name: string }) => r.name).sort(), total: res.body.data.pagination.total };
};

describe.skipIf(dialect !== 'sqlite')('record search keeps the SQLite schema independent of the number of objects', () => {
  beforeAll(async () => {
    t = await buildTestApp();
    a = await seedOrg(t.ctx);
  });
  afterAll(() => t.close());

  it('creating 50 objects (and their records) adds no schema entry', async () => {
    await createObject('first');
    const withOne = await schemaEntries();
    for (let i = 2; i <= 50; i++) await createObject(`object-${i}`);
    await call(t.app, 'POST', '/objects/object-50/records', { auth: a.auth, body: { name: 'Grace Hopper' } });
    expect(await schemaEntries()).toBe(withOne);
    expect(await names('object-50', 'q=hopper')).toEqual({ names: ['Grace Hopper'], total: 1 });
    expect(await names('first', 'q=hopper')).toEqual({ names: [], total: 0 });
  });

  it('migration 0010 moves the records of per-object tables into the shared index and drops those tables', async () => {
    await createObject('legacy');
    for (const [name, stage] of [['Ada Lovelace', 'open'], ['Alan Turing', 'won'], ['Grace Kelly', 'won']]) {
      expect((await call(t.app, 'POST', '/objects/legacy/records', { auth: a.auth, body: { name, stage } })).status).toBe(201);
    }
    const db = t.ctx.database.db;
    // The database as the previous release left it: a search table per object, no shared index.
    const objects = (await sql<{ seq: number }>`select seq from custom_objects`.execute(db)).rows;
    await sql`drop table record_search_vocab`.execute(db);
    await sql`drop table record_search`.execute(db);
    for (const { seq } of objects) {
      await sql.raw(`create virtual table records_fts_${seq} using fts5(search, chars, stage, content='', contentless_delete=1, tokenize='trigram')`).execute(db);
      await sql.raw(`create virtual table records_fts_${seq}_vocab using fts5vocab(records_fts_${seq}, 'row')`).execute(db);
    }
    await sql`delete from kysely_migration where name = '0010_shared_record_search'`.execute(db);
    const before = await schemaEntries();

    await migrateToLatest(t.ctx.database);

    const left = await sql<{ name: string }>`select name from sqlite_master where name like 'records_fts%'`.execute(db);
    expect(left.rows).toEqual([]);
    expect(await schemaEntries()).toBeLessThan(before - objects.length * 5);
    expect(await names('legacy', 'q=CE')).toEqual({ names: ['Ada Lovelace', 'Grace Kelly'], total: 2 });
    expect(await names('legacy', 'q=ing&stage=won')).toEqual({ names: ['Alan Turing'], total: 1 });
    expect(await names('legacy', 'q=k')).toEqual({ names: ['Grace Kelly'], total: 1 });
    expect(await names('object-50', 'q=grace')).toEqual({ names: ['Grace Hopper'], total: 1 });
  });
});
