import { hash } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';

/**
 * A strong entity tag of a resource as the API returns it: a digest of its canonical JSON, so any change a
 * client could see (and only such a change) gives another tag, on every instance and either database, without
 * a version column. Quoted, as HTTP wants it.
 */
export function etagOf(resource: unknown): string {
  return `"${hash('sha256', canonicalJson(resource), 'base64url').slice(0, 27)}"`;
}

/**
 * Whether an `If-Match` (strong comparison: a weak `W/` candidate never matches) or `If-None-Match` (weak
 * comparison: the tags are equal apart from `W/`) value names the current tag, as RFC 9110 §13.1 defines them.
 * `*` matches any existing resource; a value may list several tags, comma-separated.
 */
export function etagMatches(header: string, etag: string, comparison: 'strong' | 'weak'): boolean {
  return header.split(',').some((candidate) => {
    const tag = candidate.trim();
    if (tag === '*') return true;
    if (comparison === 'strong') return tag === etag;
    return tag.replace(/^W\//, '') === etag.replace(/^W\//, '');
  });
}
