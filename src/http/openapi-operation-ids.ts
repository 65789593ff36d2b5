/**
 * operationIds from a route's method and path, so that every route — including ones added later — gets a
 * stable, readable name that generators turn into method names (listLeads, getLead, restoreLead,
 * rotateWebhookSecret, listRecords). A route may still name itself with `schema.operationId`.
 *
 * The path is read as literal segments and `{params}`:
 * - ending in a param, the operation acts on one item of the collection before it: getLead, updateLead;
 * - ending in a plural literal, on a collection: listLeads, createLead (`/objects/{object}/records` → listRecords);
 * - ending in a singular literal after a param, it is an action on that item: `/leads/{id}/restore` → restoreLead,
 *   `/webhooks/{id}/rotate-secret` → rotateWebhookSecret;
 * - any other singular literal is a singleton: `/me` → getMe, `/privacy/subject` → getPrivacySubject.
 * Literals that are not followed by a param and do not end the path (`/privacy/…`) are a namespace and prefix the name.
 */

const ITEM_VERBS: Record<string, string> = { get: 'get', patch: 'update', put: 'replace', delete: 'delete', post: 'create' };
const COLLECTION_VERBS: Record<string, string> = { get: 'list', post: 'create', put: 'replace', patch: 'update', delete: 'delete' };

const isParam = (segment: string) => segment.startsWith('{') || segment.startsWith(':');
const words = (segment: string) => segment.split(/[-_.]/).filter(Boolean);
const pascal = (parts: string[]) => parts.map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');
/** `site-visits` → `SiteVisits`. */
export const pascalCase = (segment: string) => pascal(words(segment));
/** Plural: ends in s, but not in ss, us or is (access, status, analysis). */
const isPlural = (word: string) => /[^siu]s$/.test(word);

export function singular(word: string): string {
  if (/ies$/.test(word)) return word.slice(0, -3) + 'y';
  if (/(s|x|z|ch|sh)es$/.test(word)) return word.slice(0, -2);
  return isPlural(word) ? word.slice(0, -1) : word;
}

/** `['deal', 'stages']` → `['deal', 'stage']`: only the last word of a compound is plural. */
const singularWords = (segment: string) => {
  const w = words(segment);
  return [...w.slice(0, -1), singular(w.at(-1) ?? '')];
};

export function deriveOperationId(method: string, path: string, prefix = ''): string {
  const verb = method.toLowerCase();
  const segments = path.slice(path.startsWith(prefix) ? prefix.length : 0).split('/').filter(Boolean);
  const last = segments.length - 1;
  const namespace = segments.filter((s, i) => i < last && !isParam(s) && !isParam(segments[i + 1] ?? '')).flatMap(words);
  // The literal that names what the operation acts on: the last one, or the one before a trailing param.
  const nounIndex = segments.findLastIndex((s) => !isParam(s));
  if (nounIndex < 0) return verb;
  const noun = segments[nounIndex]!;
  const afterParam = nounIndex > 0 && isParam(segments[nounIndex - 1]!);
  const ns = afterParam ? [] : namespace;
  if (nounIndex < last) return (ITEM_VERBS[verb] ?? verb) + pascal([...ns, ...singularWords(noun)]);
  const nounWords = words(noun);
  if (isPlural(nounWords.at(-1) ?? '')) {
    const collection = verb === 'get' || verb === 'delete' ? nounWords : singularWords(noun);
    return (COLLECTION_VERBS[verb] ?? verb) + pascal([...ns, ...collection]);
  }
  if (afterParam) {
    const owner = segments[nounIndex - 2];
    return nounWords[0]! + pascal([...(owner ? singularWords(owner) : []), ...nounWords.slice(1)]);
  }
  return (ITEM_VERBS[verb] ?? verb) + pascal([...ns, ...nounWords]);
}
