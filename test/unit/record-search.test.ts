import { describe, expect, it } from 'vitest';
import { buildSearchText, charsColumn, ftsMatch, normalizeSearchText, prepareQuery, stageColumn } from '../../src/modules/objects/record-search.js';

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
    expect(ftsMatch(prepareQuery('  Grace "B" '), undefined)).toBe('search : "grace ""b"""');
    expect(ftsMatch(prepareQuery('Jo'), undefined, ['joe', 'joh'])).toBe('search : ("joe" OR "joh")');
    expect(ftsMatch(prepareQuery('jo'), 'won', [])).toBeNull();
    expect(ftsMatch(prepareQuery('Ä'), undefined)).toBe('chars : "\u0002ä\u0002"');
    expect(ftsMatch(prepareQuery('abc'), 'won')).toBe('search : "abc" AND stage : "\u0002won\u0002"');
  });

  it('counts characters, not UTF-16 units', () => {
    expect(prepareQuery('😀😀')).toEqual({ text: '😀😀', length: 2 });
    expect(prepareQuery('\tab\n')).toEqual({ text: 'ab', length: 2 });
  });
});
