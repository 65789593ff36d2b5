import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { canonicalJson } from '../../src/lib/canonical-json.js';
import { etagMatches, etagOf } from '../../src/lib/etag.js';

describe('entity tags', () => {
  it('are quoted, equal for equal resources whatever the key order, different for any change', () => {
    const tag = etagOf({ id: 'a', name: 'Ada', tags: [1, 2] });
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    // A tag a client stored must still match after an upgrade: the digest and its encoding are fixed.
    expect(tag).toBe('"Ylw3-ZiPIsc_SbY_z4JHLresjao"');
    expect(etagOf({ tags: [1, 2], name: 'Ada', id: 'a' })).toBe(tag);
    expect(etagOf({ id: 'a', name: 'Ada ', tags: [1, 2] })).not.toBe(tag);
    expect(etagOf({ id: 'a', name: 'Ada', tags: [2, 1] })).not.toBe(tag);
  });

  it('differ exactly when the canonical JSON differs (property)', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        expect(etagOf(a) === etagOf(b)).toBe(canonicalJson(a) === canonicalJson(b));
      }),
    );
  });

  it('If-Match compares strongly, If-None-Match weakly, both accept lists and *', () => {
    const tag = etagOf({ id: 'x' });
    expect(etagMatches(tag, tag, 'strong')).toBe(true);
    expect(etagMatches(`W/${tag}`, tag, 'strong')).toBe(false);
    expect(etagMatches(`W/${tag}`, tag, 'weak')).toBe(true);
    expect(etagMatches(`"other", ${tag}`, tag, 'strong')).toBe(true);
    expect(etagMatches('"other"', tag, 'strong')).toBe(false);
    expect(etagMatches('*', tag, 'strong')).toBe(true);
    expect(etagMatches('*', tag, 'weak')).toBe(true);
  });
});
