/**
 * Keyset positions for list pages (`after` / `nextCursor`): the last row's sort value and its `seq` tiebreak,
 * tied to the sort they were made for. Opaque to clients (base64url of JSON), so the encoding may change; a
 * tampered cursor can only name another position inside the caller's own organization, because every value
 * is bound as a parameter of the page's query.
 */
export interface ListPosition {
  /** The sort the page was read in, as the client named it (`-createdAt`, `name`, …). */
  sort: string;
  /** The last row's value of the sort key (null when it has none) … */
  value: string | number | null;
  /** … and its `seq`, which breaks ties and makes the order total. */
  seq: number;
}

export function encodeListCursor(p: ListPosition): string {
  return Buffer.from(JSON.stringify([p.sort, p.value, p.seq])).toString('base64url');
}

/** The position in a cursor made for `sort`, or null when it is malformed or was made for another sort. */
export function decodeListCursor(cursor: string, sort: string): ListPosition | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return null;
  }
  if (!Array.isArray(parsed) || parsed.length !== 3) return null;
  const [s, value, seq] = parsed as unknown[];
  if (s !== sort || !Number.isSafeInteger(seq) || (seq as number) < 0) return null;
  if (value !== null && typeof value !== 'string' && !(typeof value === 'number' && Number.isFinite(value))) return null;
  return { sort, value: value as ListPosition['value'], seq: seq as number };
}
