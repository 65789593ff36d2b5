import type { ListCursors, ListPosition } from '../lib/list-cursor.js';
import type { CursorSeal } from './cursor-seal.js';

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
