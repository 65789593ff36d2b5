import type { CursorSeal } from '../crypto/cursor-seal.js';

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

/** The cursors of one organization's lists. */
export interface ListCursors {
  seal(p: ListPosition): string;
  /** The position in a cursor made for `sort` in this organization, or null for anything else. */
  open(cursor: string, sort: string): ListPosition | null;
}

/** Sealed: `seq` in 8 bytes (a fixed width: the length of a cursor says nothing of it), then JSON of the sort and value. */
export function listCursors(ctx: { cursorSeal: CursorSeal }, organizationId: string): ListCursors {
  return {
    seal(p) {
      const seq = Buffer.alloc(8);
      seq.writeBigUInt64BE(BigInt(p.seq));
      return ctx.cursorSeal.seal('list', organizationId, Buffer.concat([seq, Buffer.from(JSON.stringify([p.sort, p.value]))]));
    },
    open(cursor, sort) {
      const bytes = ctx.cursorSeal.open('list', organizationId, cursor);
      if (bytes === null || bytes.length < 8) return null;
      const [s, value] = JSON.parse(bytes.subarray(8).toString('utf8')) as [string, ListPosition['value']];
      return s === sort ? { sort, value, seq: Number(bytes.readBigUInt64BE(0)) } : null;
    },
  };
}
