import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createCursorSeal } from '../../src/crypto/cursor-seal.js';
import { listCursors } from '../../src/crypto/list-cursors.js';

const ctx = { cursorSeal: createCursorSeal(randomBytes(32)) };
const ORG_A = 'a'.repeat(24);
const ORG_B = 'b'.repeat(24);

describe('list cursors', () => {
  it('round-trip any position for the sort and organization they were made for (property)', () => {
    const value = fc.oneof(fc.constant(null), fc.string(), fc.double({ noNaN: true, noDefaultInfinity: true }));
    const cursors = listCursors(ctx, ORG_A);
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), value, fc.maxSafeNat(), (sort, v, seq) => {
        const expected = { sort, value: Object.is(v, -0) ? 0 : v, seq };
        expect(cursors.open(cursors.seal(expected), sort)).toEqual(expected);
      }),
    );
  });

  it('hide the position: nothing of the sort value or seq is readable, and the length does not grow with seq', () => {
    const cursors = listCursors(ctx, ORG_A);
    const small = cursors.seal({ sort: '-createdAt', value: '2026-01-01T00:00:00.000Z', seq: 7 });
    const large = cursors.seal({ sort: '-createdAt', value: '2026-01-01T00:00:00.000Z', seq: 9_007_199_254_740_991 });
    expect(small).toHaveLength(large.length);
    for (const cursor of [small, large]) {
      const text = Buffer.from(cursor, 'base64url').toString('latin1');
      expect(text).not.toContain('createdAt');
      expect(text).not.toContain('2026');
    }
    // Sealed afresh each time: the same position twice gives two unrelated cursors.
    expect(cursors.seal({ sort: 'name', value: 'x', seq: 1 })).not.toBe(cursors.seal({ sort: 'name', value: 'x', seq: 1 }));
  });

  it('refuse a cursor of another sort or organization, an altered one, one under another key, and anything made up', () => {
    const cursor = listCursors(ctx, ORG_A).seal({ sort: '-createdAt', value: '2026-01-01T00:00:00.000Z', seq: 7 });
    expect(listCursors(ctx, ORG_A).open(cursor, 'name')).toBeNull();
    expect(listCursors(ctx, ORG_B).open(cursor, '-createdAt')).toBeNull();
    expect(listCursors({ cursorSeal: createCursorSeal(randomBytes(32)) }, ORG_A).open(cursor, '-createdAt')).toBeNull();
    const bytes = Buffer.from(cursor, 'base64url');
    for (let i = 0; i < bytes.length; i++) {
      const flipped = Buffer.from(bytes);
      flipped[i]! ^= 0x01;
      expect(listCursors(ctx, ORG_A).open(flipped.toString('base64url'), '-createdAt'), `byte ${i}`).toBeNull();
    }
    // The unsealed cursors handed out before (base64url of JSON) and other junk.
    for (const bad of ['', 'x', `${cursor}A`, cursor.slice(0, -1), Buffer.from('["-createdAt","2026-01-01T00:00:00.000Z",7]').toString('base64url')]) {
      expect(listCursors(ctx, ORG_A).open(bad, '-createdAt')).toBeNull();
    }
  });
});
