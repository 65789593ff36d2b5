/**
 * Keyset positions for list pages (`after` / `nextCursor`): the last row's sort value and its `seq` tiebreak,
 * tied to the sort they were made for. Sealed for the organization that listed (crypto/cursor-seal.ts): `seq`
 * is numbered across every organization, so a readable one would count their writes; a cursor a client made
 * up, changed, or took from another organization opens as nothing (400).
 */
export interface ListPosition {
  /** The sort the page was read in, as the client named it (`-createdAt`, `name`, …). */
  sort: string;
  /** The last row's value of the sort key (null when it has none) … */
  value: string | number | null;
  /** … and its `seq`, which breaks ties and makes the order total. */
  seq: number;
}

/** The cursors of one organization's lists (made by crypto/list-cursors.ts). */
export interface ListCursors {
  seal(p: ListPosition): string;
  /** The position in a cursor made for `sort` in this organization, or null for anything else. */
  open(cursor: string, sort: string): ListPosition | null;
}
