import { sql, type Kysely } from 'kysely';
import { charsColumn, stageColumn } from '../../modules/objects/record-search.js';
import { searchRowid } from '../../modules/objects/record-search.store.js';
import type { Migration } from './helpers.js';

const BATCH = 1000;

/**
 * SQLite: one FTS5 trigram index for the records of every object (record-search.store.ts), replacing the
 * table per object that objects created until now. Those put five schema entries per object into
 * sqlite_master; every connection re-parses the whole schema after any change to it, so at ~900 objects one
 * object create stalled every organization (issue 14). The old tables are contentless, so the text comes
 * again from records.search_text, in seq order and in batches. PostgreSQL already has one pg_trgm index.
 *
 * A contraction (docs/operations.md): instances of the previous release answer 500 on record writes and
 * searches once the old tables are gone, until they are replaced. Leads, accounts and deals are untouched.
 */
export const sharedRecordSearch: Migration = {
  async up({ db, dialect }) {
    if (dialect !== 'sqlite') return;
    await sql`create virtual table record_search using fts5(search, chars, stage, content='', contentless_delete=1, tokenize='trigram')`.execute(db);
    // Lists the indexed trigrams: a two-character query becomes "any trigram starting with these two".
    await sql`create virtual table record_search_vocab using fts5vocab(record_search, 'row')`.execute(db);
    await copyRecords(db);
    await dropPerObjectTables(db);
  },
};

interface Indexed {
  seq: number;
  search_text: string;
  stage: string | null;
  object_seq: number;
}

async function copyRecords(db: Kysely<any>): Promise<void> {
  for (let after = 0; ; ) {
    const { rows } = await sql<Indexed>`select r.seq, r.search_text, r.stage, o.seq as object_seq
      from records r join custom_objects o on o.id = r.object_id where r.seq > ${after} order by r.seq limit ${BATCH}`.execute(db);
    if (rows.length === 0) return;
    const values = rows.map((r) => sql`(${searchRowid(Number(r.object_seq), Number(r.seq))}, ${r.search_text}, ${charsColumn(r.search_text)}, ${stageColumn(r.stage)})`);
    await sql`insert into record_search (rowid, search, chars, stage) values ${sql.join(values)}`.execute(db);
    after = Number(rows[rows.length - 1]!.seq);
  }
}

/** The vocabulary tables first (they read their FTS table); dropping an FTS5 table drops its shadow tables. */
async function dropPerObjectTables(db: Kysely<any>): Promise<void> {
  const { rows } = await sql<{ name: string }>`select name from sqlite_master
    where type = 'table' and name glob 'records_fts_[0-9]*' and lower(sql) like 'create virtual table%'
    order by name like '%\_vocab' escape '\\' desc`.execute(db);
  for (const { name } of rows) await sql`drop table ${sql.table(name)}`.execute(db);
}
