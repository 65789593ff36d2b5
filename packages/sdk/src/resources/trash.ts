import type { CallOptions } from '../types.js';

export interface DeleteOptions {
  /** true removes the item for good at once (no restore); otherwise it moves to the trash. */
  permanent?: boolean;
}

/**
 * `delete` and `restore`, the same for every resource, built from its two calls (like `listing`). A deleted
 * item stays in the trash (`list({deleted: true})`) until it is restored or purged after the retention period.
 */
export function trashing<T>(
  remove: (id: string, query: DeleteOptions, opts?: CallOptions) => Promise<T>,
  bringBack: (id: string, opts?: CallOptions) => Promise<T>,
) {
  return {
    /** Moves the item to the trash (`deletedAt` set), or with `{permanent: true}` removes it for good. */
    delete: (id: string, options: DeleteOptions = {}, opts?: CallOptions): Promise<T> => remove(id, options, opts),
    /** Brings a deleted item back from the trash (`deletedAt` null). */
    restore: (id: string, opts?: CallOptions): Promise<T> => bringBack(id, opts),
  };
}
