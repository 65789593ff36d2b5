/**
 * The text a record is searched by, and the SQLite FTS5 query for a `q`. Pure functions; the SQL that uses
 * them is in record-search.store.ts.
 *
 * `search_text` holds the record's text and long_text values, lower-cased, each followed by FIELD_END, so a
 * query never matches across two fields (queries can't contain control characters) and every substring of
 * two characters is the start of some trigram (the one ending a value ends with FIELD_END).
 */
export const FIELD_END = '\u0001';
/** Delimits entries of the `chars` and `stage` FTS columns; never part of text or queries either. */
const MARK = '\u0002';

/** Lower-cased, control characters (tabs, newlines) as spaces: the same for stored text and for queries. */
export function normalizeSearchText(value: string): string {
  return value.toLowerCase().replace(/[\u0000-\u001f\u007f]/g, ' ');
}

export function buildSearchText(values: readonly string[]): string {
  return values.map((v) => normalizeSearchText(v) + FIELD_END).join('');
}

/**
 * One entry per distinct character of the text, each between MARKs: a one-character query then becomes
 * the single trigram MARK·c·MARK, an indexed lookup instead of a scan of every record.
 */
export function charsColumn(searchText: string): string {
  const chars = new Set([...searchText].filter((c) => c !== FIELD_END && c.trim() !== ''));
  return chars.size === 0 ? '' : `${MARK}${[...chars].join(MARK)}${MARK}`;
}

/** The stage as one exact phrase (MARK·key·MARK), so "won" never matches a stage "wont". */
export function stageColumn(stage: string | null): string {
  return stage === null ? '' : `${MARK}${stage}${MARK}`;
}

const phrase = (text: string): string => `"${text.replace(/"/g, '""')}"`;

/** A normalized, trimmed query and its length in characters (code points), as the FTS query needs. */
export interface PreparedQuery {
  text: string;
  length: number;
}

export function prepareQuery(q: string): PreparedQuery {
  const text = normalizeSearchText(q).trim();
  return { text, length: [...text].length };
}

/**
 * The FTS5 MATCH expression for a query and an optional stage. Three characters or more: the query as a
 * phrase of trigrams. Two: any of the indexed trigrams starting with them (`twoCharTerms`, read from the
 * vocabulary table). One: its `chars` entry. Null when nothing can match (no trigram starts with the pair).
 */
export function ftsMatch(query: PreparedQuery, stage: string | undefined, twoCharTerms: readonly string[] = []): string | null {
  let text: string;
  if (query.length >= 3) text = `search : ${phrase(query.text)}`;
  else if (query.length === 2) {
    if (twoCharTerms.length === 0) return null;
    text = `search : (${twoCharTerms.map(phrase).join(' OR ')})`;
  } else text = `chars : ${phrase(`${MARK}${query.text}${MARK}`)}`;
  return stage === undefined ? text : `${text} AND stage : ${phrase(stageColumn(stage))}`;
}
