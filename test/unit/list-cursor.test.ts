import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { decodeListCursor, encodeListCursor } from '../../src/lib/list-cursor.js';

describe('list cursors', () => {
  it('round-trip any position for the sort they were made for (property)', () => {
    const value = fc.oneof(fc.constant(null), fc.string(), fc.double({ noNaN: true, noDefaultInfinity: true }));
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), value, fc.nat(), (sort, v, seq) => {
        const expected = { sort, value: Object.is(v, -0) ? 0 : v, seq };
        expect(decodeListCursor(encodeListCursor(expected), sort)).toEqual(expected);
      }),
    );
  });

  it('refuse a cursor made for another sort, and anything malformed', () => {
    const cursor = encodeListCursor({ sort: '-createdAt', value: '2026-01-01T00:00:00.000Z', seq: 7 });
    expect(decodeListCursor(cursor, 'name')).toBeNull();
    for (const bad of ['', 'x', Buffer.from('[1,2]').toString('base64url'), Buffer.from('["-createdAt",{},1]').toString('base64url'), Buffer.from('["-createdAt",null,-1]').toString('base64url'), Buffer.from('["-createdAt",null,1.5]').toString('base64url')]) {
      expect(decodeListCursor(bad, '-createdAt')).toBeNull();
    }
  });
});
