import type { Core } from '../core.js';
import type { CallOptions, ResponseData } from '../types.js';

const PATHS = {
  lead: '/api/public/v1/leads/{id}/timeline',
  account: '/api/public/v1/accounts/{id}/timeline',
  deal: '/api/public/v1/deals/{id}/timeline',
  record: '/api/public/v1/objects/{object}/records/{id}/timeline',
} as const;

export type TimelinePage = ResponseData<typeof PATHS.lead, 'get'>;
export type TimelineEntry = TimelinePage['timeline'][number];
/** The item whose history to read: a lead, account or deal by id, a record by its object's slug and id. */
export type TimelineItem = { object: 'lead' | 'account' | 'deal'; id: string } | { object: 'record'; objectSlug: string; id: string };

export interface TimelineOptions {
  /** A `pagination.nextCursor` of an earlier page. */
  after?: string;
  /** Entries per request (1–100, default 25). */
  limit?: number;
  /** Only these kinds of entry, comma-separated: `event`, `note`, `task` (e.g. `'note,task'`). */
  types?: string;
  /** Only entries whose `at` is strictly after this ISO instant. */
  createdAfter?: string;
  /** Only entries whose `at` is strictly before this ISO instant. */
  createdBefore?: string;
}

/**
 * An item's timeline (its events, notes and tasks, newest first): `list` reads one page, `iterate` follows
 * `nextCursor` to the oldest entry (with the same filters). Notes and tasks appear when the key also has notes:read / tasks:read.
 */
export function timelineResource(core: Core) {
  const list = (item: TimelineItem, options: TimelineOptions = {}, opts?: CallOptions): Promise<TimelinePage> => {
    const query = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as TimelineOptions;
    if (item.object === 'record') return core.call(PATHS.record, 'get', { params: { object: item.objectSlug, id: item.id }, query }, opts);
    return core.call(PATHS[item.object], 'get', { params: { id: item.id }, query }, opts) as Promise<TimelinePage>;
  };
  return {
    list,
    iterate: async function* (item: TimelineItem, options: TimelineOptions = {}, opts?: CallOptions): AsyncGenerator<TimelineEntry, void, undefined> {
      let after = options.after;
      for (;;) {
        const page = await list(item, { ...options, ...(after !== undefined && { after }) }, opts);
        yield* page.timeline;
        if (page.pagination.nextCursor === null) return;
        after = page.pagination.nextCursor;
      }
    },
  };
}
