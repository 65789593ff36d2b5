import { sql, type Expression, type SqlBool } from 'kysely';
import type { Dialect } from '../../config.js';
import type { BlindIndex } from '../../crypto/blind-index.js';
import { substringMatch } from '../../db/search.js';
import { inView, inViewByRow, type TrashView } from '../../db/trash.js';
import { isEmail, normalizeEmail, phoneQuery } from '../../lib/contact.js';

/** What a `q` on a resource with encrypted contact fields (leads, accounts) asks for. */
export type ContactFilter =
  | { kind: 'all' }
  | { kind: 'email'; bidx: string }
  | { kind: 'phone'; bidx: string }
  | { kind: 'name'; contains: string };

/**
 * `q` (contract §4, leads and accounts alike): an e-mail → exact lookup through the blind index; a phone
 * with country code → exact lookup on its E.164 form; anything else → case-insensitive name substring.
 */
export function contactFilter(blindIndex: BlindIndex, organizationId: string, q: string | undefined): ContactFilter {
  if (q === undefined || q.trim() === '') return { kind: 'all' };
  if (isEmail(q)) return { kind: 'email', bidx: blindIndex.compute('email', organizationId, normalizeEmail(q)) };
  const phone = phoneQuery(q);
  if (phone !== null) return { kind: 'phone', bidx: blindIndex.compute('phone', organizationId, phone) };
  return { kind: 'name', contains: q.trim() };
}

/**
 * The WHERE condition of a filter on `table`, which has `email_bidx`, `phone_bidx` and a substring-indexed
 * `name` (see createSubstringIndex); null for no condition.
 */
export function contactFilterCondition(dialect: Dialect, table: string, filter: ContactFilter): Expression<SqlBool> | null {
  switch (filter.kind) {
    case 'all': return null;
    case 'email': return sql<SqlBool>`${sql.ref(`${table}.email_bidx`)} = ${filter.bidx}`;
    case 'phone': return sql<SqlBool>`${sql.ref(`${table}.phone_bidx`)} = ${filter.bidx}`;
    case 'name': return substringMatch(dialect, table, 'name', filter.contains);
  }
}

/** Which rows (live or trashed) a filtered list reads, in the form that keeps an exact lookup on its blind index. */
export function contactViewCondition(dialect: Dialect, table: string, filter: ContactFilter, view: TrashView): Expression<SqlBool> {
  return filter.kind === 'email' || filter.kind === 'phone' ? inViewByRow(dialect, table, view) : inView(table, view);
}
