import { createHmac, createSecretKey, hkdfSync } from 'node:crypto';
import { canonicalJson } from '../lib/canonical-json.js';

/** The HKDF purpose label: the entity-tag key is derived from, never equal to, the blind-index key. */
const PURPOSE = 'crm entity tag v1';

/**
 * Makes the strong entity tag (ETag) of a resource as the API returns it: a MAC of its canonical JSON, so any
 * change a client could see (and only such a change) gives another tag, without a version column. Keyed because
 * a key that may write an item but not read it gets the whole item's tag beside its minimal view (docs/resources.md):
 * a plain digest would let that key check guesses of the fields it may not read (an e-mail, a status, an owner)
 * by hashing candidate items. The key is derived (HKDF, its own purpose label) from the deployment's blind-index
 * key, which every instance loads and which never changes (blind-index-key.store.ts): tags agree across
 * instances, processes and restarts, and change only when the resource does.
 */
export interface EntityTagger {
  /** The quoted tag (as HTTP wants it) of `resource`. */
  tagOf(resource: unknown): string;
}

export function createEntityTagger(blindIndexKey: Buffer): EntityTagger {
  const secret = createSecretKey(Buffer.from(hkdfSync('sha256', blindIndexKey, Buffer.alloc(0), PURPOSE, 32)));
  return {
    tagOf: (resource) => `"${createHmac('sha256', secret).update(canonicalJson(resource)).digest('base64url').slice(0, 27)}"`,
  };
}
