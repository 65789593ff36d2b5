import type { MinimalView } from './types.js';

/**
 * Whether a write's answer is the whole item rather than its minimal view, which a key gets when it may write
 * that kind of item but not read it (`leads:write` without `leads:read`…). A whole item always has `createdAt`,
 * a minimal view never. Either carries the item's ETag (`etagOf`).
 */
export function isWhole<T extends { createdAt: string }>(item: T | MinimalView): item is T {
  return 'createdAt' in item;
}
