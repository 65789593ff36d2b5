/**
 * Whether an `If-Match` (strong comparison: a weak `W/` candidate never matches) or `If-None-Match` (weak
 * comparison: the tags are equal apart from `W/`) value names the current tag, as RFC 9110 §13.1 defines them.
 * `*` matches any existing resource; a value may list several tags, comma-separated. The tags themselves are made
 * by the context's entity tagger (crypto/entity-tag.ts).
 */
export function etagMatches(header: string, etag: string, comparison: 'strong' | 'weak'): boolean {
  return header.split(',').some((candidate) => {
    const tag = candidate.trim();
    if (tag === '*') return true;
    if (comparison === 'strong') return tag === etag;
    return tag.replace(/^W\//, '') === etag.replace(/^W\//, '');
  });
}
