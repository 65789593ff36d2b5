import { describe, expect, it } from 'vitest';
import { buildSearchText, charsColumn, ftsMatch, normalizeSearchText, objectColumn, prepareQuery, stageColumn } from '../../src/modules/objects/record-search.js';

describe('search text', () => {
  it('lower-cases values, ends each with a separator and turns control characters into spaces', () => {
    expect(buildSearchText(['Grace HOPPER', 'Line\none\tTab'])).toBe('grace hopper\u0001line one tab\u0001');
    expect(buildSearchText([])).toBe('');
    expect(normalizeSearchText('ÄÖÜ\u0000x')).toBe('äöü x');
  });

  it('lists each distinct visible character once between marks', () => {
    expect(charsColumn('abca b\u0001')).toBe('\u0002a\u0002b\u0002c\u0002');
    expect(charsColumn('😀x')).toBe('\u0002😀\u0002x\u0002');
    expect(charsColumn('')).toBe('');
    expect(stageColumn('won')).toBe('\u0002won\u0002');
    expect(stageColumn(null)).toBe('');
  });
});

describe('FTS5 match expressions', () => {
  it('uses a quoted phrase from three characters, any starting trigram for two, the chars entry for one', () => {
    const object = { objectSeq: 1 };
    const key = objectColumn(1);
    expect(ftsMatch(prepareQuery('  Grace "B" '), object)).toBe(`search : "grace ""b""" AND object : "${key}"`);
    expect(ftsMatch(prepareQuery('Jo'), object, ['joe', 'joh'])).toBe(`search : ("joe" OR "joh") AND object : "${key}"`);
    expect(ftsMatch(prepareQuery('jo'), { objectSeq: 1, stage: 'won' }, [])).toBeNull();
    expect(ftsMatch(prepareQuery('Ä'), object)).toBe(`chars : "\u0002ä\u0002" AND object : "${key}"`);
    expect(ftsMatch(prepareQuery('abc'), { objectSeq: 1, stage: 'won' })).toBe(`search : "abc" AND object : "${key}" AND stage : "\u0002won\u0002"`);
  });

  it('keys each object by one trigram of its own: a mark and two characters', () => {
    const keys = [0, 1, 19_999, 20_000, 20_001, 399_999_999].map(objectColumn);
    expect(new Set(keys).size).toBe(keys.length);
    for (const key of keys) expect([...key]).toHaveLength(3);
    expect(() => objectColumn(400_000_000)).toThrow(RangeError);
  });

  it('counts characters, not UTF-16 units', () => {
    expect(prepareQuery('😀😀')).toEqual({ text: '😀😀', length: 2 });
    expect(prepareQuery('\tab\n')).toEqual({ text: 'ab', length: 2 });
  });
});
