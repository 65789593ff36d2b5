import { createHmac, hash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { canonicalJson } from '../../src/lib/canonical-json.js';
import { createEntityTagger } from '../../src/crypto/entity-tag.js';
import { etagMatches } from '../../src/lib/etag.js';

const key = randomBytes(32);
const tagger = createEntityTagger(key);
const etagOf = (resource: unknown) => tagger.tagOf(resource);

describe('entity tags', () => {
  it('are quoted, equal for equal resources whatever the key order, different for any change', () => {
    const tag = etagOf({ id: 'a', name: 'Ada', tags: [1, 2] });
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(etagOf({ tags: [1, 2], name: 'Ada', id: 'a' })).toBe(tag);
    expect(etagOf({ id: 'a', name: 'Ada ', tags: [1, 2] })).not.toBe(tag);
    expect(etagOf({ id: 'a', name: 'Ada', tags: [2, 1] })).not.toBe(tag);
  });

  it('are fixed by the deployment key: a tag a client stored still matches after an upgrade or a restart, on any instance', () => {
    expect(createEntityTagger(Buffer.alloc(32, 7)).tagOf({ id: 'a', name: 'Ada', tags: [1, 2] })).toBe('"EhvTQv7-XA6t2gFN1YLbmeEj5yD"');
    expect(createEntityTagger(Buffer.from(key)).tagOf({ id: 'x', status: 'NEW' })).toBe(etagOf({ id: 'x', status: 'NEW' }));
  });

  it('are keyed: another key gives another tag, and no unkeyed digest of the resource can be checked against one', () => {
    const lead = { id: 'ld_1', email: 'x@y.example', status: 'NEW', ownerId: 'us_1' };
    const tag = etagOf(lead);
    expect(createEntityTagger(randomBytes(32)).tagOf(lead)).not.toBe(tag);
    const json = canonicalJson(lead);
    // The tag before it was keyed, which anyone could compute from a guessed item.
    expect(tag).not.toBe(`"${hash('sha256', json, 'base64url').slice(0, 27)}"`);
    // Nor the HMAC under the blind-index key itself: the tag key is derived under a purpose of its own.
    expect(tag).not.toBe(`"${createHmac('sha256', key).update(json).digest('base64url').slice(0, 27)}"`);
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
