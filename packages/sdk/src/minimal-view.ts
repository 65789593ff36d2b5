import type { MinimalView } from './types.js';

/**
 * Whether a write's answer is the whole item rather than its minimal view, which a key gets when it may write
 * that kind of item but not read it (`leads:write` without `leads:read`…). A whole item always has `createdAt`,
 * a minimal view never (MinimalView, and a webhook's MinimalWebhook and MinimalDelivery). Either carries the item's
 * ETag (`etagOf`).
 */
export function isWhole<T extends { createdAt: string }, M extends object = MinimalView>(item: T | M): item is T {
  return 'createdAt' in item;
}
